package jakarta.servlet.http;

import java.util.Enumeration;

// A stand-in with the three methods of Jakarta Servlet 6's HttpServletRequest
// that WaitroomPassInterceptor calls, so the tests can compile the example.
public interface HttpServletRequest {
    Enumeration<String> getHeaders(String name);

    void setAttribute(String name, Object o);

    String getRequestURI();
}
