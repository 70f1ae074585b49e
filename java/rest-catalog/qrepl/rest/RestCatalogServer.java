package qrepl.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.auth.OAuth2Properties;
import org.apache.iceberg.rest.auth.OAuth2Util;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.JsonAutoDetect;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.PropertyAccessor;
import org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory;
import org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactoryBuilder;
import org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.PropertyNamingStrategies;

/**
 * A small Iceberg REST catalog server (the REST spec's catalog endpoints that Spark's RESTCatalog
 * uses) over Iceberg's own server-side handlers (CatalogHandlers) and a JdbcCatalog: SQLite for
 * tests, PostgreSQL for a shared deployment. What Iceberg's test server (RESTCatalogAdapter +
 * RESTCatalogServlet) does, on the JDK's HTTP server, with a bearer token and no servlet jars.
 *
 * <p>Binds 127.0.0.1 only. Every request must carry {@code Authorization: Bearer <token>}, the
 * token being the content of an owner-only file (never argv, never logged), or a token this
 * server issued at {@code POST /v1/oauth/tokens} and that has not expired. That endpoint (the
 * REST spec's OAuth2 token endpoint, what a client with {@code credential=<id>:<secret>} calls)
 * takes a form-encoded {@code grant_type=client_credentials} with {@code client_id} and
 * {@code client_secret} (the secret from an owner-only file), or a token exchange of a valid
 * token, and answers an OAuthTokenResponse, or the spec's OAuthError ({@code invalid_client},
 * 401, for a wrong id or secret). Views are served
 * too (the JdbcCatalog keeps them with its schema V1): list, create, load, exists, replace
 * (a commit, 409 when its requirements no longer hold), rename and drop.
 *
 * <pre>
 * java -cp ICEBERG_JAR:SPARK_HOME/jars/*:JDBC_DRIVER:CLASSES qrepl.rest.RestCatalogServer \
 *   --port 8181 --token-file FILE --warehouse DIR --jdbc-uri jdbc:sqlite:FILE
 *   [--jdbc-user USER --jdbc-password-file FILE]
 *   [--client-id ID --client-secret-file FILE [--token-ttl SECONDS]]
 * </pre>
 */
public final class RestCatalogServer {
  private static final ObjectMapper MAPPER = mapper();
  private static final Object NO_ROUTE = new Object();
  private static final Set<PosixFilePermission> NOT_OWNER =
      Set.of(
          PosixFilePermission.GROUP_READ,
          PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE,
          PosixFilePermission.OTHERS_READ,
          PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);
  // what /v1/config advertises: a client calls nothing else
  private static final List<Endpoint> ENDPOINTS =
      List.of(
          Endpoint.V1_LIST_NAMESPACES,
          Endpoint.V1_LOAD_NAMESPACE,
          Endpoint.V1_NAMESPACE_EXISTS,
          Endpoint.V1_CREATE_NAMESPACE,
          Endpoint.V1_UPDATE_NAMESPACE,
          Endpoint.V1_DELETE_NAMESPACE,
          Endpoint.V1_LIST_TABLES,
          Endpoint.V1_LOAD_TABLE,
          Endpoint.V1_TABLE_EXISTS,
          Endpoint.V1_CREATE_TABLE,
          Endpoint.V1_UPDATE_TABLE,
          Endpoint.V1_DELETE_TABLE,
          Endpoint.V1_RENAME_TABLE,
          Endpoint.V1_REGISTER_TABLE,
          Endpoint.V1_REPORT_METRICS,
          Endpoint.V1_LIST_VIEWS,
          Endpoint.V1_LOAD_VIEW,
          Endpoint.V1_VIEW_EXISTS,
          Endpoint.V1_CREATE_VIEW,
          Endpoint.V1_UPDATE_VIEW,
          Endpoint.V1_DELETE_VIEW,
          Endpoint.V1_RENAME_VIEW);

  private final Catalog catalog;
  private final SupportsNamespaces namespaces;
  private final ViewCatalog views;
  private final byte[] expectedAuthorization;
  private final String clientId; // null: no OAuth2 client (the token endpoint refuses all)
  private final byte[] clientSecret;
  private final int tokenTtlSeconds;
  private final Map<String, Long> issued = new ConcurrentHashMap<>(); // token -> expiry (ms)
  private final SecureRandom random = new SecureRandom();

  private RestCatalogServer(Catalog catalog, String token, String clientId, String clientSecret, int tokenTtlSeconds) {
    this.catalog = catalog;
    this.namespaces = (SupportsNamespaces) catalog;
    this.views = (ViewCatalog) catalog; // JdbcCatalog is a BaseMetastoreViewCatalog
    this.expectedAuthorization = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    this.clientId = clientId;
    this.clientSecret = clientSecret == null ? null : clientSecret.getBytes(StandardCharsets.UTF_8);
    this.tokenTtlSeconds = tokenTtlSeconds;
  }

  /** RESTObjectMapper's settings (that class is package-private) on the runtime jar's Jackson. */
  private static ObjectMapper mapper() {
    JsonFactory factory =
        new JsonFactoryBuilder()
            .configure(JsonFactory.Feature.INTERN_FIELD_NAMES, false)
            .configure(JsonFactory.Feature.FAIL_ON_SYMBOL_HASH_OVERFLOW, false)
            .build();
    ObjectMapper mapper = new ObjectMapper(factory);
    mapper.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    mapper.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    mapper.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
    RESTSerializers.registerAll(mapper);
    return mapper;
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = parseArgs(argv);
    int port = Integer.parseInt(required(args, "--port"));
    String jdbcUri = required(args, "--jdbc-uri");
    if (jdbcUri.toLowerCase(Locale.ROOT).contains("password")) {
      fail("--jdbc-uri must not carry a password (argv is visible to every user): use --jdbc-password-file");
    }
    String token = readOwnerOnly(Paths.get(required(args, "--token-file")));
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    props.put(CatalogProperties.URI, jdbcUri);
    props.put(CatalogProperties.WAREHOUSE_LOCATION, required(args, "--warehouse"));
    props.put("jdbc.schema-version", "V1");
    if (args.containsKey("--jdbc-user")) {
      props.put("jdbc.user", args.get("--jdbc-user"));
    }
    if (args.containsKey("--jdbc-password-file")) {
      props.put("jdbc.password", readOwnerOnly(Paths.get(args.get("--jdbc-password-file"))));
    }
    if (jdbcUri.startsWith("jdbc:sqlite:")) {
      props.put(CatalogProperties.CLIENT_POOL_SIZE, "1"); // one writer: no SQLITE_BUSY
    }
    Configuration hadoopConf = new Configuration();
    hadoopConf.set("fs.permissions.umask-mode", "077"); // metadata files: owner-only
    Catalog catalog;
    HttpServer server;
    try {
      catalog = CatalogUtil.buildIcebergCatalog("qrepl_rest", props, hadoopConf);
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    } catch (Exception e) { // one line naming the cause first (the script shows it), then the trace
      Throwable cause = e;
      while (cause.getCause() != null) {
        cause = cause.getCause();
      }
      System.err.println("qrepl REST catalog: cannot start: " + cause);
      e.printStackTrace();
      System.exit(1);
      return;
    }
    String clientId = args.get("--client-id");
    String clientSecret = null;
    if (clientId != null) {
      clientSecret = readOwnerOnly(Paths.get(required(args, "--client-secret-file")));
    }
    int ttl = Integer.parseInt(args.getOrDefault("--token-ttl", "3600"));
    RestCatalogServer handler = new RestCatalogServer(catalog, token, clientId, clientSecret, ttl);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    server.createContext("/", handler::handle);
    server.setExecutor(pool);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.stop(1);
                  pool.shutdown();
                  ((JdbcCatalog) catalog).close();
                  System.err.println("qrepl REST catalog stopped");
                }));
    server.start();
    System.err.printf( // scripts/rest_catalog.sh waits for this line
        "qrepl REST catalog on http://127.0.0.1:%d (catalog %s, warehouse %s)%n",
        port, jdbcUri, props.get(CatalogProperties.WAREHOUSE_LOCATION));
  }

  private static Map<String, String> parseArgs(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (int i = 0; i < argv.length; i += 2) {
      if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
        fail("usage: RestCatalogServer --port N --token-file FILE --warehouse DIR --jdbc-uri URI"
            + " [--jdbc-user USER --jdbc-password-file FILE]"
            + " [--client-id ID --client-secret-file FILE [--token-ttl SECONDS]]");
      }
      args.put(argv[i], argv[i + 1]);
    }
    return args;
  }

  private static String required(Map<String, String> args, String name) {
    String value = args.get(name);
    if (value == null || value.isEmpty()) {
      fail("missing " + name);
    }
    return value;
  }

  private static void fail(String message) {
    System.err.println("qrepl REST catalog: " + message);
    System.exit(2);
  }

  /** A secret file's content; refuses a file other users can read or write. */
  private static String readOwnerOnly(Path file) throws IOException {
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
    for (PosixFilePermission p : perms) {
      if (NOT_OWNER.contains(p)) {
        fail(file + " is open to other users (" + perms + "): a secret file must be owner-only (chmod 600)");
      }
    }
    String value = Files.readString(file, StandardCharsets.UTF_8).strip();
    if (value.isEmpty()) {
      fail(file + " is empty");
    }
    return value;
  }

  private void handle(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    try (exchange) {
      String rawPath = exchange.getRequestURI().getRawPath();
      if (rawPath.equals("/v1/oauth/tokens") && method.equals("POST")) {
        issueToken(exchange); // its credentials are in the form, not a bearer token
        return;
      }
      if (!authorized(exchange.getRequestHeaders().getFirst("Authorization"))) {
        exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
        sendError(exchange, method, 401, "NotAuthorizedException", "missing, wrong or expired bearer token");
        return;
      }
      List<String> path = new ArrayList<>();
      for (String part : rawPath.split("/")) {
        if (!part.isEmpty()) {
          path.add(part);
        }
      }
      Object body;
      try {
        body = route(method, path, query(exchange.getRequestURI().getRawQuery()), exchange.getRequestBody());
      } catch (JsonProcessingException e) {
        sendError(exchange, method, 400, "BadRequestException", "malformed request body: " + e.getOriginalMessage());
        return;
      } catch (RuntimeException e) {
        int code = statusOf(e);
        if (code == 500) {
          System.err.println(method + " " + rawPath + ": " + e);
          e.printStackTrace();
        }
        sendError(exchange, method, code, e.getClass().getSimpleName(), e.getMessage());
        return;
      }
      if (body == NO_ROUTE) {
        sendError(exchange, method, 400, "BadRequestException", "No route for request: " + method + " " + rawPath);
      } else if (body == null) {
        exchange.sendResponseHeaders(204, -1);
      } else {
        send(exchange, method, 200, MAPPER.writeValueAsBytes(body));
      }
    }
  }

  /** The static token, or one this server issued that has not expired. */
  private boolean authorized(String auth) {
    if (auth == null) {
      return false;
    }
    if (MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), expectedAuthorization)) {
      return true;
    }
    return auth.startsWith("Bearer ") && valid(auth.substring("Bearer ".length()));
  }

  private boolean valid(String token) {
    Long expiry = issued.get(token);
    if (expiry == null) {
      return false;
    }
    if (expiry < System.currentTimeMillis()) {
      issued.remove(token);
      return false;
    }
    return true;
  }

  /**
   * POST /v1/oauth/tokens (application/x-www-form-urlencoded): client_credentials with this
   * server's client id and secret, or a token exchange (Iceberg's refresh) of a valid token.
   */
  private void issueToken(HttpExchange exchange) throws IOException {
    Map<String, String> form =
        query(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
    String grant = form.getOrDefault("grant_type", "");
    if (grant.equals("client_credentials")) {
      String secret = form.get("client_secret");
      boolean ok =
          clientSecret != null
              && secret != null
              && MessageDigest.isEqual(secret.getBytes(StandardCharsets.UTF_8), clientSecret)
              && clientId.equals(form.getOrDefault("client_id", clientId));
      if (!ok) {
        oauthError(exchange, 401, OAuth2Properties.INVALID_CLIENT_ERROR, "unknown client or wrong client secret");
        return;
      }
    } else if (grant.equals("urn:ietf:params:oauth:grant-type:token-exchange")) {
      String subject = form.get("subject_token");
      if (subject == null || !(valid(subject) || authorized("Bearer " + subject))) {
        oauthError(exchange, 401, OAuth2Properties.INVALID_CLIENT_ERROR, "the subject token is not valid");
        return;
      }
    } else {
      oauthError(exchange, 400, OAuth2Properties.UNSUPPORTED_GRANT_TYPE_ERROR, "grant_type must be client_credentials or token-exchange");
      return;
    }
    byte[] bytes = new byte[32];
    random.nextBytes(bytes);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    issued.put(token, System.currentTimeMillis() + tokenTtlSeconds * 1000L);
    System.err.println("issued a token for " + tokenTtlSeconds + " s (" + grant + ")"); // never the token
    OAuthTokenResponse response =
        OAuthTokenResponse.builder()
            .withToken(token)
            .withTokenType("bearer")
            .withIssuedTokenType(OAuth2Properties.ACCESS_TOKEN_TYPE)
            .setExpirationInSeconds(tokenTtlSeconds)
            .build();
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    send(exchange, "POST", 200, OAuth2Util.tokenResponseToJson(response).getBytes(StandardCharsets.UTF_8));
  }

  /** The REST spec's OAuthError: {"error": ..., "error_description": ...}. */
  private static void oauthError(HttpExchange exchange, int code, String error, String description)
      throws IOException {
    Map<String, String> body = new LinkedHashMap<>();
    body.put("error", error);
    body.put("error_description", description);
    send(exchange, "POST", code, MAPPER.writeValueAsBytes(body));
  }

  /** The response object (null: 204 No Content), or NO_ROUTE. */
  private Object route(String method, List<String> path, Map<String, String> query, InputStream in)
      throws IOException {
    int n = path.size();
    if (n < 2 || !path.get(0).equals("v1")) {
      return NO_ROUTE;
    }
    String first = path.get(1);
    if (n == 2 && first.equals("config") && method.equals("GET")) {
      return ConfigResponse.builder().withEndpoints(ENDPOINTS).build();
    }
    if (n == 3 && first.equals("tables") && path.get(2).equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameTable(catalog, read(in, RenameTableRequest.class));
      return null;
    }
    if (n == 3 && first.equals("views") && path.get(2).equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameView(views, read(in, RenameTableRequest.class));
      return null;
    }
    if (!first.equals("namespaces")) {
      return NO_ROUTE;
    }
    if (n == 2) {
      switch (method) {
        case "GET":
          Namespace parent =
              query.containsKey("parent")
                  ? Namespace.of(query.get("parent").split("\u001f"))
                  : Namespace.empty();
          return query.containsKey("pageSize")
              ? CatalogHandlers.listNamespaces(namespaces, parent, query.get("pageToken"), query.get("pageSize"))
              : CatalogHandlers.listNamespaces(namespaces, parent);
        case "POST":
          return CatalogHandlers.createNamespace(namespaces, read(in, CreateNamespaceRequest.class));
        default:
          return NO_ROUTE;
      }
    }
    Namespace ns = RESTUtil.decodeNamespace(path.get(2));
    if (n == 3) {
      switch (method) {
        case "GET":
          return CatalogHandlers.loadNamespace(namespaces, ns);
        case "HEAD":
          CatalogHandlers.namespaceExists(namespaces, ns);
          return null;
        case "DELETE":
          CatalogHandlers.dropNamespace(namespaces, ns);
          return null;
        default:
          return NO_ROUTE;
      }
    }
    String kind = path.get(3);
    if (n == 4 && kind.equals("properties") && method.equals("POST")) {
      return CatalogHandlers.updateNamespaceProperties(
          namespaces, ns, read(in, UpdateNamespacePropertiesRequest.class));
    }
    if (n == 4 && kind.equals("register") && method.equals("POST")) {
      return CatalogHandlers.registerTable(catalog, ns, read(in, RegisterTableRequest.class));
    }
    if (kind.equals("views")) {
      return routeView(method, n, path, ns, query, in);
    }
    if (!kind.equals("tables")) {
      return NO_ROUTE;
    }
    if (n == 4) {
      switch (method) {
        case "GET":
          return query.containsKey("pageSize")
              ? CatalogHandlers.listTables(catalog, ns, query.get("pageToken"), query.get("pageSize"))
              : CatalogHandlers.listTables(catalog, ns);
        case "POST":
          CreateTableRequest request = read(in, CreateTableRequest.class);
          request.validate();
          return request.stageCreate()
              ? CatalogHandlers.stageTableCreate(catalog, ns, request)
              : CatalogHandlers.createTable(catalog, ns, request);
        default:
          return NO_ROUTE;
      }
    }
    TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(path.get(4)));
    if (n == 6 && path.get(5).equals("metrics") && method.equals("POST")) {
      in.readAllBytes(); // scan and commit reports: accepted, not kept
      return null;
    }
    if (n != 5) {
      return NO_ROUTE;
    }
    switch (method) {
      case "GET":
        return CatalogHandlers.loadTable(catalog, ident);
      case "HEAD":
        CatalogHandlers.tableExists(catalog, ident);
        return null;
      case "POST":
        return CatalogHandlers.updateTable(catalog, ident, read(in, UpdateTableRequest.class));
      case "DELETE":
        if (Boolean.parseBoolean(query.getOrDefault("purgeRequested", "false"))) {
          CatalogHandlers.purgeTable(catalog, ident);
        } else {
          CatalogHandlers.dropTable(catalog, ident);
        }
        return null;
      default:
        return NO_ROUTE;
    }
  }

  /** /v1/namespaces/{ns}/views[/{view}]: the REST spec's view endpoints. */
  private Object routeView(String method, int n, List<String> path, Namespace ns, Map<String, String> query, InputStream in)
      throws IOException {
    if (n == 4) {
      switch (method) {
        case "GET":
          return query.containsKey("pageSize")
              ? CatalogHandlers.listViews(views, ns, query.get("pageToken"), query.get("pageSize"))
              : CatalogHandlers.listViews(views, ns);
        case "POST":
          CreateViewRequest request = read(in, CreateViewRequest.class);
          request.validate();
          return CatalogHandlers.createView(views, ns, request);
        default:
          return NO_ROUTE;
      }
    }
    if (n != 5) {
      return NO_ROUTE;
    }
    TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(path.get(4)));
    switch (method) {
      case "GET":
        return CatalogHandlers.loadView(views, ident);
      case "HEAD":
        CatalogHandlers.viewExists(views, ident);
        return null;
      case "POST": // replace: a commit whose requirements (the view's uuid) must hold
        return CatalogHandlers.updateView(views, ident, read(in, UpdateTableRequest.class));
      case "DELETE":
        CatalogHandlers.dropView(views, ident);
        return null;
      default:
        return NO_ROUTE;
    }
  }

  private static <T> T read(InputStream in, Class<T> type) throws IOException {
    T value = MAPPER.readValue(in, type);
    if (value == null) {
      throw new BadRequestException("missing request body");
    }
    return value;
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> params = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return params;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      params.put(
          URLDecoder.decode(key, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return params;
  }

  /** The REST spec's status for an exception of the catalog (RESTCatalogAdapter's table). */
  static int statusOf(RuntimeException e) {
    if (e instanceof NoSuchNamespaceException
        || e instanceof NoSuchTableException
        || e instanceof NoSuchViewException) {
      return 404;
    }
    if (e instanceof AlreadyExistsException
        || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      return 409; // CommitFailed: a requirement (compare-and-swap) did not hold; the client retries
    }
    if (e instanceof CommitStateUnknownException) {
      return 500;
    }
    if (e instanceof ValidationException
        || e instanceof IllegalArgumentException
        || e instanceof BadRequestException) {
      return 400;
    }
    if (e instanceof NotAuthorizedException) {
      return 401;
    }
    if (e instanceof ForbiddenException) {
      return 403;
    }
    if (e instanceof UnsupportedOperationException) {
      return 406;
    }
    return 500;
  }

  private static void sendError(HttpExchange exchange, String method, int code, String type, String message)
      throws IOException {
    ErrorResponse error =
        ErrorResponse.builder().responseCode(code).withType(type).withMessage(message).build();
    send(exchange, method, code, MAPPER.writeValueAsBytes(error));
  }

  private static void send(HttpExchange exchange, String method, int code, byte[] json) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    if (method.equals("HEAD")) { // a HEAD answer has no body
      exchange.sendResponseHeaders(code, -1);
      return;
    }
    exchange.sendResponseHeaders(code, json.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(json);
    }
  }
}
