import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECFieldFp;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Verifies a waitroom admission pass (the Waitroom-Pass request header) with the JDK alone (Java 17).
 *
 * <p>A pass is a compact JWS: {@code base64url(header).base64url(claims).base64url(signature)}, header
 * {@code {"alg":"EdDSA","kid":...,"typ":"JWT"}} (or "ES256" with the gateway's pass.algorithm: ES256), an Ed25519
 * (or ECDSA P-256) signature over the first two segments and the dot,
 * claims iss, aud, sub, room, path, tkt, iat, exp. The gateway publishes its public keys as a JWK Set.
 *
 * <pre>{@code
 * WaitroomPass passes = WaitroomPass.builder()
 *     .jwksUrl("https://queue.example.com/.waitroom/jwks.json")
 *     .issuer("waitroom").audience("shop").build();
 * // The room (for template rooms, filled from the request: "event-" + id) and the request's own path.
 * WaitroomPass.Claims c = passes.verify(request.getHeader(WaitroomPass.HEADER), "concert",
 *     request.getRequestURI()); // throws Refused
 * }</pre>
 *
 * <p>Checks, in this order (the Go and Node verifiers use the same order and reason codes): size (4 KiB) and
 * shape (three canonical base64url segments) "malformed"; header alg EdDSA or ES256, matching the key, "algorithm", no crit and a kid
 * "malformed"; the kid in the key set "unknown_key" (or "keys_unavailable"); the signature "signature"; the claims
 * JSON "malformed"; exp plus leeway in the future "expired"; iat at most leeway in the future "not_yet_valid"; iss
 * "issuer"; aud "audience"; room "room"; path "path".
 *
 * <p>Run it as a program to check passes by hand or from tests: {@code java WaitroomPass.java --jwks URL|FILE
 * --audience shop [--issuer waitroom] [--room concert] [--path /events/1] [--leeway 5] [--min-refetch 30] [TOKEN]}.
 * With a TOKEN it prints the claims as JSON (exit 0) or the reason (exit 1); without, it reads "room TAB path TAB
 * token" lines from stdin (an empty room or path checks none) and answers each with "ok {claims}" or "refused
 * reason detail".
 */
public final class WaitroomPass {
    /** The request header that carries the pass. */
    public static final String HEADER = "Waitroom-Pass";
    /** The longest pass accepted, in bytes. */
    public static final int MAX_TOKEN_SIZE = 4096;

    static final int MAX_JWKS_BYTES = 64 * 1024;
    static final int MAX_KEYS = 64;
    // DER of SubjectPublicKeyInfo{AlgorithmIdentifier{1.3.101.112 (Ed25519)}, BIT STRING(32 bytes)}, minus the key.
    private static final byte[] ED25519_SPKI_PREFIX = {
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
    private static final Base64.Decoder B64_DEC = Base64.getUrlDecoder();
    private static final Base64.Encoder B64_ENC = Base64.getUrlEncoder().withoutPadding();

    /** The claims of a verified pass; times are seconds since the Unix epoch. */
    public record Claims(String issuer, List<String> audience, String subject, String room, String path,
            long ticket, long issuedAt, long expiresAt) {
        /** The claims as JSON, with the wire's member names. */
        public String toJson() {
            StringBuilder b = new StringBuilder("{\"iss\":").append(quote(issuer)).append(",\"aud\":[");
            for (int i = 0; i < audience.size(); i++) {
                b.append(i > 0 ? "," : "").append(quote(audience.get(i)));
            }
            return b.append("],\"sub\":").append(quote(subject)).append(",\"room\":").append(quote(room))
                    .append(",\"path\":").append(quote(path)).append(",\"tkt\":").append(ticket).append(",\"iat\":").append(issuedAt)
                    .append(",\"exp\":").append(expiresAt).append('}').toString();
        }
    }

    /** A pass was refused; {@link #reason()} is the short code, the message a detail without the token. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final String reason;

        public Refused(String reason, String detail) {
            super(reason + ": " + detail);
            this.reason = reason;
        }

        /** One of missing, malformed, algorithm, unknown_key, keys_unavailable, signature, expired,
         * not_yet_valid, issuer, audience, room, path. */
        public String reason() {
            return reason;
        }
    }

    private final Keys keys;
    private final String issuer;
    private final String audience;
    private final long leeway;
    private final Clock clock;

    private WaitroomPass(Builder b) {
        this.issuer = b.issuer;
        this.audience = Objects.requireNonNull(b.audience, "audience is required");
        if (audience.isEmpty()) {
            throw new IllegalArgumentException("audience is required");
        }
        if (b.leeway.isNegative()) {
            throw new IllegalArgumentException("leeway must not be negative");
        }
        this.leeway = b.leeway.getSeconds();
        this.clock = b.clock;
        if (b.jwksJson != null) {
            this.keys = new Keys(parseJwks(b.jwksJson));
        } else if (b.jwksUrl != null) {
            this.keys = new Keys(URI.create(b.jwksUrl), b);
        } else {
            throw new IllegalArgumentException("set jwksUrl or jwks");
        }
    }

    /** Starts a verifier's settings. */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a verifier. */
    public static final class Builder {
        private String jwksUrl;
        private String jwksJson;
        private String issuer = "";
        private String audience;
        private Duration leeway = Duration.ofSeconds(5);
        private Duration refresh = Duration.ofMinutes(5);
        private Duration minRefetch = Duration.ofSeconds(30);
        private Duration timeout = Duration.ofSeconds(5);
        private Clock clock = Clock.systemUTC();

        /** The gateway's JWK Set URL; fetched on first use, then every refresh. */
        public Builder jwksUrl(String url) { this.jwksUrl = url; return this; }
        /** A fixed JWK Set instead of a URL. */
        public Builder jwks(String json) { this.jwksJson = json; return this; }
        /** The expected iss; empty (default) skips the check. */
        public Builder issuer(String v) { this.issuer = v; return this; }
        /** The site's name as the gateway knows it; required. */
        public Builder audience(String v) { this.audience = v; return this; }
        /** Clock skew tolerated on exp and iat; default 5s (a revoked pass is refused within the gateway's
         * pass.ttl plus this). */
        public Builder leeway(Duration v) { this.leeway = v; return this; }
        /** How old the fetched set may grow; default 5 minutes. */
        public Builder refresh(Duration v) { this.refresh = v; return this; }
        /** Least time between fetches an unknown kid or a failure may start; default 30s. */
        public Builder minRefetch(Duration v) { this.minRefetch = v; return this; }
        /** Bound of one fetch; default 5s. */
        public Builder timeout(Duration v) { this.timeout = v; return this; }
        /** The clock; default the system's. */
        public Builder clock(Clock v) { this.clock = v; return this; }
        /** Checks the settings and makes the verifier. */
        public WaitroomPass build() { return new WaitroomPass(this); }
    }

    /** Verifies a pass; room, when not null or empty, must equal the room claim; the path is not checked. */
    public Claims verify(String token, String room) throws Refused {
        return verify(token, room, null);
    }

    /**
     * Verifies a pass for a request: room and path, when not null or empty, must equal the room and path claims.
     * The path is the request's as received, without the query: {@code request.getRequestURI()}.
     */
    public Claims verify(String token, String room, String path) throws Refused {
        byte[][] segs = split(token);
        String[] algAndKid = parseHeader(segs[0]);
        String alg = algAndKid[0];
        String kid = algAndKid[1];
        PublicKey key = keys.key(kid);
        // The key decides the algorithm, never the header alone.
        if (!algOf(key).equals(alg)) {
            throw new Refused("algorithm", "alg " + alg + " does not match key " + clip(kid));
        }
        if (segs[2].length != 64 || !verifySignature(alg, key, token.substring(0, token.lastIndexOf('.')), segs[2])) {
            throw new Refused("signature", "the signature does not match key " + clip(kid));
        }
        Claims c = parseClaims(segs[1]);
        check(c, room, path);
        return c;
    }

    private void check(Claims c, String room, String path) throws Refused {
        long now = clock.instant().getEpochSecond();
        if (now >= c.expiresAt() + leeway) {
            throw new Refused("expired", "expired " + (now - c.expiresAt()) + "s ago");
        }
        if (c.issuedAt() > now + leeway) {
            throw new Refused("not_yet_valid", "issued " + (c.issuedAt() - now) + "s in the future");
        }
        if (!issuer.isEmpty() && !issuer.equals(c.issuer())) {
            throw new Refused("issuer", "iss is " + clip(c.issuer()) + ", want " + issuer);
        }
        if (!c.audience().contains(audience)) {
            throw new Refused("audience", "aud does not name " + audience);
        }
        if (room != null && !room.isEmpty() && !room.equals(c.room())) {
            throw new Refused("room", "room is " + clip(c.room()) + ", want " + clip(room));
        }
        if (path != null && !path.isEmpty() && !path.equals(c.path())) {
            throw new Refused("path", "path is " + clip(c.path()) + ", want " + clip(path));
        }
    }

    private static byte[][] split(String token) throws Refused {
        if (token == null || token.isEmpty()) {
            throw new Refused("missing", "no pass");
        }
        if (token.length() > MAX_TOKEN_SIZE) {
            throw new Refused("malformed", "longer than " + MAX_TOKEN_SIZE + " bytes");
        }
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) {
            throw new Refused("malformed", "want three dot-separated segments, got " + parts.length);
        }
        byte[][] out = new byte[3][];
        for (int i = 0; i < 3; i++) {
            out[i] = decodeSegment(parts[i]);
            if (out[i] == null) {
                throw new Refused("malformed", "segment " + (i + 1) + " is not base64url");
            }
        }
        return out;
    }

    /** Decodes unpadded base64url, or null unless s is the one canonical encoding of its bytes. */
    static byte[] decodeSegment(String s) {
        if (s.isEmpty()) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            boolean ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')
                    || ch == '-' || ch == '_';
            if (!ok) {
                return null;
            }
        }
        try {
            byte[] b = B64_DEC.decode(s);
            return B64_ENC.encodeToString(b).equals(s) ? b : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The alg and kid of a header that asks for EdDSA or ES256 and nothing this verifier does not understand. */
    private static String[] parseHeader(byte[] raw) throws Refused {
        Map<String, Object> h = object(raw, "the header");
        if (!"EdDSA".equals(h.get("alg")) && !"ES256".equals(h.get("alg"))) {
            Object alg = h.get("alg");
            throw new Refused("algorithm", "alg " + (alg instanceof String s ? clip(s) : "(not a string)")
                    + " is not EdDSA or ES256");
        }
        if (h.containsKey("crit")) {
            throw new Refused("malformed", "the header has crit");
        }
        if (!(h.get("kid") instanceof String kid) || kid.isEmpty()) {
            throw new Refused("malformed", "the header has no kid");
        }
        return new String[] {(String) h.get("alg"), kid};
    }

    /** The alg a key of the set signs with: ES256 for its P-256 keys, EdDSA for its Ed25519 ones. */
    private static String algOf(PublicKey key) {
        return key instanceof ECPublicKey ? "ES256" : "EdDSA";
    }

    private static Claims parseClaims(byte[] raw) throws Refused {
        Map<String, Object> m = object(raw, "the claims");
        List<String> aud = new ArrayList<>();
        Object a = m.get("aud");
        if (a instanceof String s) {
            aud.add(s);
        } else if (a instanceof List<?> list) {
            for (Object x : list) {
                if (!(x instanceof String s)) {
                    throw new Refused("malformed", "claim aud has the wrong type");
                }
                aud.add(s);
            }
        } else if (m.containsKey("aud")) {
            throw new Refused("malformed", "claim aud has the wrong type");
        }
        return new Claims(string(m, "iss"), Collections.unmodifiableList(aud), string(m, "sub"), string(m, "room"),
                string(m, "path"), integer(m, "tkt", false), integer(m, "iat", true), integer(m, "exp", true));
    }

    private static String string(Map<String, Object> m, String name) throws Refused {
        if (!m.containsKey(name)) {
            return "";
        }
        if (m.get(name) instanceof String s) {
            return s;
        }
        throw new Refused("malformed", "claim " + name + " has the wrong type");
    }

    private static long integer(Map<String, Object> m, String name, boolean required) throws Refused {
        if (!m.containsKey(name)) {
            if (required) {
                throw new Refused("malformed", "claim " + name + " is missing");
            }
            return 0;
        }
        if (m.get(name) instanceof Long n) {
            return n;
        }
        throw new Refused("malformed", "claim " + name + " has the wrong type");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(byte[] raw, String what) throws Refused {
        try {
            if (Json.parse(new String(raw, StandardCharsets.UTF_8)) instanceof Map<?, ?> m) {
                return (Map<String, Object>) m;
            }
        } catch (IllegalArgumentException e) {
            // falls through to the refusal
        }
        throw new Refused("malformed", what + " is not a JSON object");
    }

    private static boolean verifySignature(String alg, PublicKey key, String signed, byte[] sig) {
        try {
            // ES256 signatures are r and s, 32 bytes each (RFC 7518 3.4): the JDK's P1363 format, not DER.
            Signature s = Signature.getInstance("ES256".equals(alg) ? "SHA256withECDSAinP1363Format" : "Ed25519");
            s.initVerify(key);
            s.update(signed.getBytes(StandardCharsets.US_ASCII));
            return s.verify(sig);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** Reads a JWK Set, keeping its Ed25519 and P-256 signing keys (others are skipped); kid to key. */
    static Map<String, PublicKey> parseJwks(String json) {
        Object root;
        try {
            root = Json.parse(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("reading the key set: not JSON");
        }
        if (!(root instanceof Map<?, ?> set) || !(set.get("keys") instanceof List<?> list)) {
            throw new IllegalArgumentException("reading the key set: not a JSON object with a keys array");
        }
        if (list.size() > MAX_KEYS) {
            throw new IllegalArgumentException("reading the key set: " + list.size() + " keys, at most " + MAX_KEYS);
        }
        Map<String, PublicKey> out = new HashMap<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> k) || !optional(k, "use", "sig") || !(k.get("x") instanceof String x)) {
                continue;
            }
            byte[] raw = decodeSegment(x);
            try {
                if ("OKP".equals(k.get("kty")) && "Ed25519".equals(k.get("crv")) && optional(k, "alg", "EdDSA")
                        && raw != null && raw.length == 32) {
                    String kid = k.get("kid") instanceof String s && !s.isEmpty() ? s : thumbprint(x);
                    out.putIfAbsent(kid, publicKey(raw));
                } else if ("EC".equals(k.get("kty")) && "P-256".equals(k.get("crv")) && optional(k, "alg", "ES256")
                        && k.get("y") instanceof String y && raw != null && raw.length == 32) {
                    byte[] rawY = decodeSegment(y);
                    if (rawY != null && rawY.length == 32) {
                        String kid = k.get("kid") instanceof String s && !s.isEmpty() ? s : thumbprint(x, y);
                        out.putIfAbsent(kid, ecPublicKey(raw, rawY));
                    }
                }
            } catch (GeneralSecurityException e) {
                // not a key this JDK accepts (or off the curve): skipped like any other key it does not understand
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("reading the key set: no Ed25519 or P-256 signing key in it");
        }
        return out;
    }

    private static boolean optional(Map<?, ?> k, String name, String want) {
        return !k.containsKey(name) || want.equals(k.get(name));
    }

    /** An Ed25519 public key from the JWK's 32 raw bytes: the fixed SPKI DER prefix, then the key. */
    static PublicKey publicKey(byte[] x) throws GeneralSecurityException {
        byte[] der = new byte[ED25519_SPKI_PREFIX.length + x.length];
        System.arraycopy(ED25519_SPKI_PREFIX, 0, der, 0, ED25519_SPKI_PREFIX.length);
        System.arraycopy(x, 0, der, ED25519_SPKI_PREFIX.length, x.length);
        return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
    }

    /** A P-256 public key from the JWK's coordinates, refused unless the point is on the curve. */
    static PublicKey ecPublicKey(byte[] x, byte[] y) throws GeneralSecurityException {
        AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
        params.init(new ECGenParameterSpec("secp256r1"));
        ECParameterSpec spec = params.getParameterSpec(ECParameterSpec.class);
        BigInteger px = new BigInteger(1, x);
        BigInteger py = new BigInteger(1, y);
        BigInteger p = ((ECFieldFp) spec.getCurve().getField()).getP();
        BigInteger rhs = px.pow(3).add(spec.getCurve().getA().multiply(px)).add(spec.getCurve().getB());
        if (px.compareTo(p) >= 0 || py.compareTo(p) >= 0 || !py.multiply(py).subtract(rhs).mod(p).equals(BigInteger.ZERO)) {
            throw new GeneralSecurityException("the point is not on P-256");
        }
        return KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(new ECPoint(px, py), spec));
    }

    /** The RFC 7638 thumbprint of a P-256 JWK with these coordinates: the pass's kid. */
    static String thumbprint(String x, String y) {
        return sha256(("{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"" + x + "\",\"y\":\"" + y + "\"}")
                .getBytes(StandardCharsets.UTF_8));
    }

    /** The RFC 7638 thumbprint of an Ed25519 JWK with this x: the pass's kid. */
    static String thumbprint(String x) {
        return sha256(("{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"" + x + "\"}").getBytes(StandardCharsets.UTF_8));
    }

    private static String sha256(byte[] canon) {
        try {
            return B64_ENC.encodeToString(java.security.MessageDigest.getInstance("SHA-256").digest(canon));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String clip(String s) {
        return quote(s.length() > 64 ? s.substring(0, 64) : s);
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (ch < 0x20 || ch > 0x7e) {
                        b.append(String.format("\\u%04x", (int) ch)); // ASCII out, whatever the console's charset
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /**
     * The key set: fixed, or fetched from a URL and cached. A known kid is answered at once (from a set older than
     * refresh too, while it is fetched again in the background); an unknown kid, or no set yet, waits for a fetch
     * when one runs or may start. A fetch may start for the first load, for a due refresh after a success, or
     * minRefetch after the last one started, so a flood of made-up kids costs one request per minRefetch at most.
     * A failed fetch keeps the keys already known.
     */
    private final class Keys {
        private final URI url;
        private final HttpClient client;
        private final Duration refresh;
        private final Duration minRefetch;
        private final Duration timeout;
        private Map<String, PublicKey> set; // guarded by this
        private Instant fetched;
        private Instant attempted;
        private String lastError;
        private CompletableFuture<Void> inflight;

        Keys(Map<String, PublicKey> fixed) {
            this.set = fixed;
            this.url = null;
            this.client = null;
            this.refresh = this.minRefetch = this.timeout = null;
        }

        Keys(URI url, Builder b) {
            if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme())) {
                throw new IllegalArgumentException("jwksUrl: want an http or https URL");
            }
            this.url = url;
            this.refresh = b.refresh;
            this.minRefetch = b.minRefetch;
            this.timeout = b.timeout;
            this.client = HttpClient.newBuilder().connectTimeout(b.timeout)
                    .followRedirects(HttpClient.Redirect.NORMAL).build();
        }

        PublicKey key(String kid) throws Refused {
            if (url == null) {
                return lookup(kid);
            }
            PublicKey k;
            CompletableFuture<Void> wait;
            synchronized (this) {
                Instant now = clock.instant();
                k = set == null ? null : set.get(kid);
                boolean stale = set == null || !now.isBefore(fetched.plus(refresh));
                if (k != null && !stale) {
                    return k;
                }
                wait = inflight;
                if (wait == null && (attempted == null || (stale && lastError == null)
                        || !now.isBefore(attempted.plus(minRefetch)))) {
                    attempted = now;
                    wait = inflight = fetch();
                    if (wait.isDone()) {
                        inflight = null; // it ended before it was recorded
                    }
                }
            }
            if (k == null && wait != null) {
                try {
                    wait.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    // the outcome is recorded in lastError; lookup reports it
                }
            }
            return lookup(kid);
        }

        private synchronized PublicKey lookup(String kid) throws Refused {
            if (set == null) {
                throw new Refused("keys_unavailable", lastError == null ? "no key set yet" : lastError);
            }
            PublicKey k = set.get(kid);
            if (k == null) {
                throw new Refused("unknown_key", "kid " + clip(kid) + " is not in the key set");
            }
            return k;
        }

        private CompletableFuture<Void> fetch() {
            HttpRequest req = HttpRequest.newBuilder(url).timeout(timeout)
                    .header("Accept", "application/jwk-set+json, application/json").GET().build();
            return client.sendAsync(req, HttpResponse.BodyHandlers.ofInputStream())
                    .thenApply(this::read)
                    .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .handle((keys, err) -> {
                        synchronized (this) {
                            if (err == null) {
                                set = keys;
                                fetched = clock.instant();
                                lastError = null;
                            } else {
                                Throwable cause = err.getCause() != null ? err.getCause() : err;
                                lastError = "fetching the key set: " + cause;
                            }
                            inflight = null;
                        }
                        return null;
                    });
        }

        private Map<String, PublicKey> read(HttpResponse<InputStream> resp) {
            try (InputStream in = resp.body()) {
                if (resp.statusCode() != 200) {
                    throw new IllegalStateException("status " + resp.statusCode());
                }
                byte[] body = in.readNBytes(MAX_JWKS_BYTES + 1);
                if (body.length > MAX_JWKS_BYTES) {
                    throw new IllegalStateException("larger than " + MAX_JWKS_BYTES + " bytes");
                }
                return parseJwks(new String(body, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalStateException(e.toString());
            }
        }
    }

    /**
     * A small JSON reader: objects (LinkedHashMap, a repeated member keeps the last value), arrays, strings, Long or
     * Double, booleans, null; at most 32 nested arrays and objects, as the other verifiers allow.
     */
    static final class Json {
        private static final int MAX_DEPTH = 32;
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String s) {
            Json p = new Json(s);
            Object v = p.value(0);
            p.ws();
            if (p.i != s.length()) {
                throw new IllegalArgumentException("trailing data at " + p.i);
            }
            return v;
        }

        private void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw new IllegalArgumentException("unexpected end");
            }
            return s.charAt(i);
        }

        private void expect(char c) {
            if (peek() != c) {
                throw new IllegalArgumentException("want '" + c + "' at " + i);
            }
            i++;
        }

        private Object value(int depth) {
            ws();
            char c = peek();
            if ((c == '{' || c == '[') && depth >= MAX_DEPTH) {
                throw new IllegalArgumentException("nested deeper than " + MAX_DEPTH);
            }
            switch (c) {
                case '{': return object(depth);
                case '[': return array(depth);
                case '"': return string();
                case 't': return literal("true", Boolean.TRUE);
                case 'f': return literal("false", Boolean.FALSE);
                case 'n': return literal("null", null);
                default: return number();
            }
        }

        private Map<String, Object> object(int depth) {
            Map<String, Object> m = new LinkedHashMap<>();
            expect('{');
            ws();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                m.put(k, value(depth + 1));
                ws();
                if (peek() == ',') {
                    i++;
                    continue;
                }
                expect('}');
                return m;
            }
        }

        private List<Object> array(int depth) {
            List<Object> a = new ArrayList<>();
            expect('[');
            ws();
            if (peek() == ']') {
                i++;
                return a;
            }
            while (true) {
                a.add(value(depth + 1));
                ws();
                if (peek() == ',') {
                    i++;
                    continue;
                }
                expect(']');
                return a;
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') {
                    return b.toString();
                }
                if (c < 0x20) {
                    throw new IllegalArgumentException("control character in a string");
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = peek();
                i++;
                switch (e) {
                    case '"', '\\', '/' -> b.append(e);
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw new IllegalArgumentException("short \\u escape");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw new IllegalArgumentException("bad \\u escape");
                        }
                        i += 4;
                    }
                    default -> throw new IllegalArgumentException("bad escape");
                }
            }
        }

        private Object literal(String word, Object v) {
            if (!s.startsWith(word, i)) {
                throw new IllegalArgumentException("bad literal at " + i);
            }
            i += word.length();
            return v;
        }

        /** A JSON number: Long when it is an integer in range, written without fraction or exponent; else Double. */
        private Object number() {
            int start = i;
            if (i < s.length() && s.charAt(i) == '-') {
                i++;
            }
            int intStart = i;
            digits();
            if (i == intStart || (s.charAt(intStart) == '0' && i - intStart > 1)) {
                throw new IllegalArgumentException("bad number at " + start);
            }
            boolean integral = true;
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                integral = false;
                if (digits() == 0) {
                    throw new IllegalArgumentException("bad number at " + start);
                }
            }
            if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                i++;
                integral = false;
                if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                    i++;
                }
                if (digits() == 0) {
                    throw new IllegalArgumentException("bad number at " + start);
                }
            }
            String lit = s.substring(start, i);
            if (integral) {
                try {
                    return Long.parseLong(lit);
                } catch (NumberFormatException e) {
                    // out of range: read as a Double, which no integer claim accepts
                }
            }
            return Double.parseDouble(lit);
        }

        private int digits() {
            int n = 0;
            while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
                n++;
            }
            return n;
        }
    }

    /** The command line: see the class comment. */
    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new HashMap<>();
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--") && i + 1 < args.length) {
                opt.put(args[i].substring(2), args[++i]);
            } else {
                tokens.add(args[i]);
            }
        }
        String jwks = opt.get("jwks");
        if (jwks == null || opt.get("audience") == null) {
            System.err.println("usage: java WaitroomPass.java --jwks URL|FILE --audience NAME [--issuer NAME]"
                    + " [--room NAME] [--path PATH] [--leeway SECONDS] [--min-refetch SECONDS] [TOKEN]");
            System.exit(2);
        }
        Builder b = builder().audience(opt.get("audience")).issuer(opt.getOrDefault("issuer", ""))
                .leeway(Duration.ofSeconds(Long.parseLong(opt.getOrDefault("leeway", "5"))))
                .minRefetch(Duration.ofSeconds(Long.parseLong(opt.getOrDefault("min-refetch", "30"))));
        if (jwks.startsWith("http://") || jwks.startsWith("https://")) {
            b.jwksUrl(jwks);
        } else {
            b.jwks(Files.readString(Path.of(jwks)));
        }
        WaitroomPass v = b.build();
        String room = opt.getOrDefault("room", "");
        String path = opt.getOrDefault("path", "");
        if (!tokens.isEmpty()) {
            try {
                System.out.println(v.verify(tokens.get(0), room, path).toJson());
                System.exit(0);
            } catch (Refused e) {
                System.out.println("refused " + e.getMessage());
                System.exit(1);
            }
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            String lineRoom = f.length >= 2 ? f[0] : room;
            String linePath = f.length >= 3 ? f[1] : path;
            try {
                System.out.println("ok " + v.verify(f[f.length - 1], lineRoom, linePath).toJson());
            } catch (Refused e) {
                System.out.println("refused " + e.reason() + " " + e.getMessage());
            }
            System.out.flush();
        }
        System.exit(0);
    }
}
