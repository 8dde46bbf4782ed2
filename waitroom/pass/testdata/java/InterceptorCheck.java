import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

// Runs WaitroomPassInterceptor.preHandle against stand-in requests, for the
// Go tests: InterceptorCheck JWKS_FILE ROOM REQUESTS... where each REQUESTS
// is a path, a space, then "-" (no Waitroom-Pass header) or passes separated
// by commas (one header each). ROOM "event-*" names the room from the path's
// second segment ("event-" + it), as a site of template rooms does. Prints,
// per request: proceeded, status, the room of the claims left in the request
// attribute (or -), and Cache-Control (or -).
public final class InterceptorCheck {
    public static void main(String[] args) throws Exception {
        WaitroomPass passes = WaitroomPass.builder().jwks(Files.readString(Path.of(args[0])))
                .issuer("waitroom").audience("shop").build();
        WaitroomPassInterceptor interceptor = args[1].equals("event-*")
                ? new WaitroomPassInterceptor(passes, req -> "event-" + req.getRequestURI().split("/")[2])
                : new WaitroomPassInterceptor(passes, args[1]);
        for (int i = 2; i < args.length; i++) {
            String[] pathAndPasses = args[i].split(" ", 2);
            String path = pathAndPasses[0];
            List<String> values = pathAndPasses[1].equals("-") ? List.of() : Arrays.asList(pathAndPasses[1].split(","));
            Map<String, Object> attrs = new HashMap<>();
            Map<String, String> headers = new HashMap<>();
            int[] status = {200};
            HttpServletRequest req = new HttpServletRequest() {
                @Override
                public Enumeration<String> getHeaders(String name) {
                    return name.equalsIgnoreCase(WaitroomPass.HEADER) ? Collections.enumeration(values)
                            : Collections.emptyEnumeration();
                }

                @Override
                public void setAttribute(String name, Object o) {
                    attrs.put(name, o);
                }

                @Override
                public String getRequestURI() {
                    return path;
                }
            };
            HttpServletResponse resp = new HttpServletResponse() {
                @Override
                public void setHeader(String name, String value) {
                    headers.put(name, value);
                }

                @Override
                public void sendError(int sc, String msg) {
                    status[0] = sc;
                }
            };
            boolean proceeded = interceptor.preHandle(req, resp, null);
            Object claims = attrs.get(WaitroomPassInterceptor.ATTRIBUTE);
            System.out.println(proceeded + " " + status[0] + " "
                    + (claims instanceof WaitroomPass.Claims c ? c.room() : "-") + " "
                    + headers.getOrDefault("Cache-Control", "-"));
        }
    }
}
