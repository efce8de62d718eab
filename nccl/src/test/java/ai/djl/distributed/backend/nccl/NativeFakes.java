/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
package ai.djl.distributed.backend.nccl;

import com.sun.jna.ptr.IntByReference;

import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.function.Function;

/**
 * Stand-ins for the native libraries where a test needs one to answer a call or two (a version, a
 * failing cuInit): a dynamic proxy that answers the named methods and refuses every other call.
 */
final class NativeFakes {

    private NativeFakes() {}

    static <T> T of(Class<T> type, Map<String, Function<Object[], Object>> answers) {
        Object proxy =
                Proxy.newProxyInstance(
                        type.getClassLoader(),
                        new Class<?>[] {type},
                        (self, method, args) -> {
                            Function<Object[], Object> answer = answers.get(method.getName());
                            if (answer == null) {
                                throw new UnsupportedOperationException(
                                        "fake " + type.getSimpleName() + "." + method.getName());
                            }
                            return answer.apply(args);
                        });
        return type.cast(proxy);
    }

    /** An NCCL whose ncclGetVersion reports the given code. */
    static NcclLibrary nccl(int versionCode) {
        return of(
                NcclLibrary.class,
                Map.of(
                        "ncclGetVersion",
                        args -> {
                            ((IntByReference) args[0]).setValue(versionCode);
                            return 0;
                        }));
    }
}
