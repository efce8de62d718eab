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
package ai.djl.distributed.store.tcp;

import java.time.Duration;

/** Constants of PyTorch's TCPStore protocol, and this server's default limits. */
public final class StoreProtocol {

    /** The magic number a client sends with {@link StoreOpcode#VALIDATE}. */
    public static final int MAGIC = 0x3C85F7CE;

    /** CHECK's reply when every key exists. */
    public static final int CHECK_READY = 0;

    /** CHECK's reply when some key is missing. */
    public static final int CHECK_NOT_READY = 1;

    /** WAIT's reply once every key exists. */
    public static final int STOP_WAITING = 0;

    /** CANCEL_WAIT's reply. */
    public static final int WAIT_CANCELED = 1;

    /** The prefix PyTorch's client puts before every user key. */
    public static final String KEY_PREFIX = "/";

    /** The counter every client with a world size adds to; sent without {@link #KEY_PREFIX}. */
    public static final String INIT_KEY = "init/";

    /** Default bound on one key, in bytes. */
    public static final int DEFAULT_MAX_KEY_BYTES = 64 * 1024;

    /** Default bound on one request's keys and values together, in bytes. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024;

    /** Default bound on the key count of CHECK, WAIT, MULTI_GET and MULTI_SET (PyTorch's). */
    public static final int DEFAULT_MAX_KEYS = 128 * 1024;

    /**
     * Default bound on the memory partly received requests hold across all of a server's
     * connections: two requests of {@link #DEFAULT_MAX_REQUEST_BYTES} arriving in parts at once
     * (the last growth of a value's array holds about twice its size).
     */
    public static final long DEFAULT_MAX_PARTIAL_REQUEST_BYTES = 4L * DEFAULT_MAX_REQUEST_BYTES;

    /**
     * Default bound on the memory that MULTI_GET and LIST replies not yet sent hold across all of a
     * server's connections: four replies of {@link #DEFAULT_MAX_REQUEST_BYTES} (a reply's limit).
     */
    public static final long DEFAULT_MAX_QUEUED_REPLY_BYTES = 4L * DEFAULT_MAX_REQUEST_BYTES;

    /**
     * Default bound on how long a request may stay partly received: 30 s, time for a request of
     * {@link #DEFAULT_MAX_REQUEST_BYTES} at about 2 MiB/s.
     */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);

    private StoreProtocol() {}
}
