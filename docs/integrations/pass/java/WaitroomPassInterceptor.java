import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Enumeration;
import java.util.function.Function;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * An example, for Spring MVC 6 (Spring Boot 3): refuses a request that does not carry exactly one valid waitroom
 * pass for the room and the request's own path ({@code getRequestURI()}), with 403 (503 when the gateway's key set cannot be loaded), and leaves the verified claims in
 * the request attribute {@value #ATTRIBUTE}. Copy it and WaitroomPass.java (the tested verifier it relies on) into
 * your application's package, then register it for the paths the room guards:
 *
 * <pre>{@code
 * @Configuration
 * class WaitroomConfig implements WebMvcConfigurer {
 *     private final WaitroomPass passes = WaitroomPass.builder()
 *         .jwksUrl("https://tickets.example.com/.waitroom/jwks.json")
 *         .issuer("waitroom").audience("shop").build();
 *
 *     @Override
 *     public void addInterceptors(InterceptorRegistry registry) {
 *         registry.addInterceptor(new WaitroomPassInterceptor(passes, "concert")).addPathPatterns("/bookings/**");
 *         // Rooms filled from a template ("event-{id}" on /events/{id}/): the room from the request.
 *         registry.addInterceptor(new WaitroomPassInterceptor(passes,
 *             req -> "event-" + req.getRequestURI().split("/")[2])).addPathPatterns("/events/{id}/checkout");
 *     }
 * }
 * }</pre>
 *
 * <p>This repository's tests compile it against stand-ins of the three Spring and Servlet types it names; they
 * cannot run it.
 */
public final class WaitroomPassInterceptor implements HandlerInterceptor {
    /** The request attribute that holds the verified {@link WaitroomPass.Claims}. */
    public static final String ATTRIBUTE = "waitroomPass";

    private final WaitroomPass passes;
    private final String room;
    private final Function<HttpServletRequest, String> roomOf;

    /** room: the room a pass must be for; null or empty accepts any room of the audience. */
    public WaitroomPassInterceptor(WaitroomPass passes, String room) {
        this.passes = passes;
        this.room = room;
        this.roomOf = null;
    }

    /** roomOf: the room a pass must be for, named from the request; null or empty refuses the request. */
    public WaitroomPassInterceptor(WaitroomPass passes, Function<HttpServletRequest, String> roomOf) {
        this.passes = passes;
        this.room = null;
        this.roomOf = roomOf;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws Exception {
        String token = null;
        int count = 0;
        for (Enumeration<String> e = request.getHeaders(WaitroomPass.HEADER); e != null && e.hasMoreElements(); ) {
            token = e.nextElement();
            count++;
        }
        try {
            if (count != 1) {
                throw new WaitroomPass.Refused("missing", "want one " + WaitroomPass.HEADER + " header, got " + count);
            }
            String want = roomOf == null ? room : roomOf.apply(request);
            if (roomOf != null && (want == null || want.isEmpty())) {
                throw new WaitroomPass.Refused("room", "the request names no room");
            }
            request.setAttribute(ATTRIBUTE, passes.verify(token, want, request.getRequestURI()));
            return true;
        } catch (WaitroomPass.Refused refused) {
            // Log refused.reason() if you like; never the token. The answer says nothing a forger could use.
            response.setHeader("Cache-Control", "no-store");
            if ("keys_unavailable".equals(refused.reason())) {
                response.sendError(503, "the waiting room pass cannot be checked right now");
            } else {
                response.sendError(403, "a valid waiting room pass is required");
            }
            return false;
        }
    }
}
