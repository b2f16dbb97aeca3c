package jbodcheck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;

/**
 * jbodcheck's request gate (docs/realkafka.md, "The gate"): an Authorizer that allows every request except those
 * the control file lists, so that the harness can keep a request such as AssignReplicasToDirs undelivered for as
 * long as a trace needs, without stopping a process.
 *
 * The control file ({@code jbodcheck.gate.file}) holds one rule a line: {@code API AT FROM [OPERATION [MODE]]},
 * where API is an ApiKeys name (ASSIGN_REPLICAS_TO_DIRS), AT the node id that denies it, FROM the requesting
 * broker's node id (a broker's requests to the controller carry its node id as client id; its replica fetchers
 * "broker-N-fetcher-M"), OPERATION an AclOperation name; "*" matches anything. MODE is "deny" (the default) or
 * "delay" ("delay=MS"): the request waits in {@code authorize}, on the node's request handler thread, until no rule
 * matches it any more (then it is allowed: delivered late, not refused), a refusing rule matches it, or MS
 * milliseconds (25000 by default: below the 30 s after which a broker's controller channel times a request out and
 * sends it again) have passed (then refused). At most num.io.threads - 1 requests wait at once, so that one
 * handler thread always serves the others (a request beyond that is refused). The file is re-read whenever it
 * changes (the harness replaces it atomically). Every denial and every delay is appended to
 * {@code jbodcheck.gate.log}.
 */
public class Gate implements Authorizer {
    private Path file;
    private Path log;
    private String nodeId = "?";
    private Object seen;                      // the control file's (inode, mtime, size) last read
    private volatile List<String[]> rules = Collections.emptyList();
    private static final long DELAY_CAP_MS = 25000;
    private static final long POLL_MS = 20;
    private int delaySlots = 1;               // num.io.threads - 1: one handler thread always free
    private final AtomicInteger waiting = new AtomicInteger();

    @Override
    public void configure(Map<String, ?> configs) {
        Object f = configs.get("jbodcheck.gate.file");
        Object l = configs.get("jbodcheck.gate.log");
        Object n = configs.get("node.id");
        file = f == null ? null : Paths.get(f.toString());
        log = l == null ? null : Paths.get(l.toString());
        nodeId = n == null ? "?" : n.toString();
        Object io = configs.get("num.io.threads");
        try {
            delaySlots = Math.max(0, (io == null ? 8 : Integer.parseInt(io.toString().trim())) - 1);
        } catch (NumberFormatException e) {
            delaySlots = 0;
        }
    }

    @Override
    public Map<Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        Map<Endpoint, CompletableFuture<Void>> out = new java.util.HashMap<>();
        for (Endpoint e : serverInfo.endpoints()) out.put(e, CompletableFuture.completedFuture(null));
        return out;
    }

    private synchronized List<String[]> currentRules() {
        if (file == null) return Collections.emptyList();
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            String key = a.fileKey() + "/" + a.lastModifiedTime().toMillis() + "/" + a.size();
            if (!key.equals(seen)) {
                List<String[]> parsed = new ArrayList<>();
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    String t = line.trim();
                    if (t.isEmpty() || t.startsWith("#")) continue;
                    parsed.add(t.split("\\s+"));
                }
                rules = parsed;
                seen = key;
            }
        } catch (NoSuchFileException e) {
            rules = Collections.emptyList();
            seen = null;
        } catch (IOException e) {
            // keep the rules last read: a half-written file is never seen (the harness renames), so this is rare
        }
        return rules;
    }

    private static boolean matches(String pattern, String value) {
        return pattern.equals("*") || pattern.equalsIgnoreCase(value);
    }

    private static boolean fromMatches(String pattern, String clientId) {
        if (pattern.equals("*")) return true;
        return clientId != null && (clientId.equals(pattern) || clientId.startsWith("broker-" + pattern + "-"));
    }

    private static String apiName(int key) {
        try {
            return ApiKeys.forId(key).name();
        } catch (IllegalArgumentException | UnsupportedVersionException e) {
            return Integer.toString(key);
        }
    }

    private String[] rule(List<String[]> rs, String api, AuthorizableRequestContext ctx, Action action) {
        for (String[] r : rs) {
            if (r.length < 3) continue;
            if (matches(r[0], api) && matches(r[1], nodeId) && fromMatches(r[2], ctx.clientId())
                    && (r.length < 4 || matches(r[3], action.operation().name()))) {
                return r;
            }
        }
        return null;
    }

    private static boolean delays(String[] r) {
        return r.length >= 5 && r[4].toLowerCase().startsWith("delay");
    }

    private static long capOf(String[] r) {
        int eq = r[4].indexOf('=');
        if (eq < 0) return DELAY_CAP_MS;
        try {
            return Long.parseLong(r[4].substring(eq + 1));
        } catch (NumberFormatException e) {
            return DELAY_CAP_MS;
        }
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext ctx, List<Action> actions) {
        List<String[]> rs = currentRules();
        List<AuthorizationResult> out = new ArrayList<>(actions.size());
        String api = rs.isEmpty() ? null : apiName(ctx.requestType());
        for (Action action : actions) {
            String[] r = rule(rs, api, ctx, action);
            boolean denied = r != null;
            if (r != null && delays(r)) {
                denied = !delayed(api, ctx, action, capOf(r));
                rs = currentRules();
            } else if (denied) {
                note(api, ctx, action, "");
            }
            out.add(denied ? AuthorizationResult.DENIED : AuthorizationResult.ALLOWED);
        }
        return out;
    }

    /** Keep the request waiting until no delaying rule matches it: true (allow) when none does, false (deny) when a
     *  refusing rule does, after the cap, or when no handler thread may wait. */
    private boolean delayed(String api, AuthorizableRequestContext ctx, Action action, long cap) {
        long start = System.currentTimeMillis();
        if (waiting.incrementAndGet() > delaySlots) {
            waiting.decrementAndGet();
            note(api, ctx, action, " delayed=0 then=DENIED no-free-handler-thread");
            return false;
        }
        try {
            while (true) {
                String[] r = rule(currentRules(), api, ctx, action);
                long waited = System.currentTimeMillis() - start;
                if (r == null) {
                    note(api, ctx, action, " delayed=" + waited + " then=ALLOWED");
                    return true;
                }
                if (!delays(r) || waited >= cap) {
                    note(api, ctx, action, " delayed=" + waited + " then=DENIED");
                    return false;
                }
                Thread.sleep(POLL_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            note(api, ctx, action, " delayed=" + (System.currentTimeMillis() - start) + " then=DENIED interrupted");
            return false;
        } finally {
            waiting.decrementAndGet();
        }
    }

    private synchronized void note(String api, AuthorizableRequestContext ctx, Action action, String tail) {
        if (log == null) return;
        String line = System.currentTimeMillis() + " " + api + " at=" + nodeId + " from=" + ctx.clientId()
                + " op=" + action.operation().name() + " resource=" + action.resourcePattern().name() + tail + "\n";
        try {
            Files.write(log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            // the denial stands; only its note is lost
        }
    }

    @Override
    public List<? extends CompletionStage<AclCreateResult>> createAcls(AuthorizableRequestContext ctx,
                                                                      List<AclBinding> bindings) {
        throw new UnsupportedOperationException("jbodcheck's gate keeps no ACLs");
    }

    @Override
    public List<? extends CompletionStage<AclDeleteResult>> deleteAcls(AuthorizableRequestContext ctx,
                                                                      List<AclBindingFilter> filters) {
        throw new UnsupportedOperationException("jbodcheck's gate keeps no ACLs");
    }

    @Override
    public Iterable<AclBinding> acls(AclBindingFilter filter) {
        return Collections.emptyList();
    }

    @Override
    public void close() {
    }
}
