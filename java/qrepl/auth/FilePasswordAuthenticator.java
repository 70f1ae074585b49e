package qrepl.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.Set;
import javax.security.sasl.AuthenticationException;

import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * The Spark Thrift Server's login check (hive.server2.authentication=CUSTOM, docs/security.md):
 * one user, QREPL_THRIFT_USER (default qrepl), whose password is the first line of the owner-only
 * file QREPL_THRIFT_PASSWORD_FILE. Both come from the server's environment, never its command
 * line. The file is read at every login, so replacing it rotates the password without a restart.
 * Built by scripts/thrift.sh with javac against the PySpark distribution's
 * spark-hive-thriftserver jar; put on the server's --driver-class-path.
 */
public class FilePasswordAuthenticator implements PasswdAuthenticationProvider {
    @Override
    public void Authenticate(String user, String password) throws AuthenticationException {
        String file = System.getenv("QREPL_THRIFT_PASSWORD_FILE");
        String expectedUser = System.getenv().getOrDefault("QREPL_THRIFT_USER", "qrepl");
        if (file == null || file.isEmpty()) {
            throw new AuthenticationException("qrepl: QREPL_THRIFT_PASSWORD_FILE is not set on the server");
        }
        String expected;
        try {
            Path path = Paths.get(file);
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(path);
            for (PosixFilePermission p : perms) {
                if (p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_")) {
                    throw new AuthenticationException("qrepl: " + file + " is readable by other users; refusing every login");
                }
            }
            expected = new String(Files.readAllBytes(path), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new AuthenticationException("qrepl: cannot read the Thrift password file", e);
        }
        boolean userOk = MessageDigest.isEqual(bytes(expectedUser), bytes(user));
        boolean passwordOk = !expected.isEmpty() && MessageDigest.isEqual(bytes(expected), bytes(password));
        if (!(userOk && passwordOk)) {
            throw new AuthenticationException("qrepl: wrong user or password");
        }
    }

    private static byte[] bytes(String s) {
        return (s == null ? "" : s).getBytes(StandardCharsets.UTF_8);
    }
}
