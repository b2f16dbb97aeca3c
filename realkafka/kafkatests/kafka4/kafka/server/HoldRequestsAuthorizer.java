/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. See the NOTICE file distributed with
 * this work for additional information regarding copyright ownership.
 * The ASF licenses this file to You under the Apache License, Version 2.0
 * (the "License"); you may not use this file except in compliance with
 * the License. You may obtain a copy of the License at
 *
 *    http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
package kafka.server;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * An authorizer for tests (authorizer.class.name, on the controller) that denies the requests of the APIs held and
 * allows every other request. A broker answered CLUSTER_AUTHORIZATION_FAILED for AssignReplicasToDirs or
 * BrokerHeartbeat retries it, so the request stays undelivered for as long as a test holds it, and is handled at
 * once after the release: a timing window of Kafka's is held open instead of raced.
 */
public class HoldRequestsAuthorizer implements Authorizer {
    private static final Set<Short> HELD = ConcurrentHashMap.newKeySet();

    public static void hold(ApiKeys api) {
        HELD.add(api.id);
    }

    public static void release(ApiKeys api) {
        HELD.remove(api.id);
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public Map<Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        return serverInfo.endpoints().stream()
            .collect(Collectors.toMap(e -> e, e -> CompletableFuture.completedFuture(null)));
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
        boolean deny = HELD.contains((short) context.requestType());
        return actions.stream()
            .map(a -> deny ? AuthorizationResult.DENIED : AuthorizationResult.ALLOWED)
            .collect(Collectors.toList());
    }

    @Override
    public List<? extends CompletionStage<AclCreateResult>> createAcls(AuthorizableRequestContext context,
                                                                      List<AclBinding> aclBindings) {
        throw new UnsupportedOperationException();
    }

    @Override
    public List<? extends CompletionStage<AclDeleteResult>> deleteAcls(AuthorizableRequestContext context,
                                                                      List<AclBindingFilter> filters) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Iterable<AclBinding> acls(AclBindingFilter filter) {
        return List.of();
    }

    @Override
    public void close() {
    }
}
