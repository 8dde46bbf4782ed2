package jakarta.servlet.http;

import java.io.IOException;

// A stand-in with the two methods of Jakarta Servlet 6's HttpServletResponse
// that WaitroomPassInterceptor calls, so the tests can compile the example.
public interface HttpServletResponse {
    void setHeader(String name, String value);

    void sendError(int sc, String msg) throws IOException;
}
