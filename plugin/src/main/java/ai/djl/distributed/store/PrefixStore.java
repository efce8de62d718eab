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
package ai.djl.distributed.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A namespace inside another store: every key becomes {@code prefix + "/" + key}, exactly as
 * PyTorch's {@code PrefixStore} joins them, so prefixed keys meet Python ranks' keys. Prefix stores
 * nest.
 *
 * <p>It only rewrites keys, both ways: a {@link StoreTimeoutException} names the keys as this
 * store's caller passed them, in this store (whose description shows the prefix); the underlying
 * store's exception, naming the joined keys, is its cause. {@link #numKeys()}, the timeout and
 * {@link #hasExtendedApi()} are the underlying store's. A prefix store made by the constructor does
 * not own the underlying store: {@link #close()} leaves it open; one made by {@link #owning} closes
 * it.
 */
public final class PrefixStore implements Store {

    private final String prefix;
    private final Store store;
    private final boolean owns;

    /**
     * Creates a prefix store.
     *
     * @param prefix the prefix, without the joining {@code "/"}
     * @param store the underlying store
     * @throws IllegalArgumentException if either is null, or the prefix holds an unpaired surrogate
     */
    public PrefixStore(String prefix, Store store) {
        this(prefix, store, false);
    }

    private PrefixStore(String prefix, Store store, boolean owns) {
        // checked here, as PyTorch's constructor refuses it, not later in every joined key
        Stores.checkUtf8("prefix", prefix);
        if (store == null) {
            throw new IllegalArgumentException("store: null (expected: a Store to wrap)");
        }
        this.prefix = prefix;
        this.store = store;
        this.owns = owns;
    }

    /**
     * Creates a prefix store that owns the store it wraps: closing it closes that store. For a
     * store handed to code that closes what it is given, such as the attempt-scoped store of a
     * rendezvous under torchrun's agent.
     *
     * @param prefix the prefix, without the joining {@code "/"}
     * @param store the underlying store, closed with this one
     * @return the prefix store
     * @throws IllegalArgumentException if either is null, or the prefix holds an unpaired surrogate
     */
    public static PrefixStore owning(String prefix, Store store) {
        return new PrefixStore(prefix, store, true);
    }

    /**
     * Returns the prefix.
     *
     * @return the prefix, without the joining {@code "/"}
     */
    public String getPrefix() {
        return prefix;
    }

    /**
     * Returns the store this one wraps.
     *
     * @return the underlying store
     */
    public Store getUnderlyingStore() {
        return store;
    }

    /**
     * Returns the first store below any nesting of prefix stores.
     *
     * @return the innermost store that is not a {@code PrefixStore}
     */
    public Store getUnderlyingNonPrefixStore() {
        Store s = store;
        while (s instanceof PrefixStore) {
            s = ((PrefixStore) s).store;
        }
        return s;
    }

    private String join(String key) {
        return prefix + "/" + Stores.checkKey(key);
    }

    private List<String> join(List<String> keys) {
        List<String> joined = new ArrayList<>(Stores.checkKeys(keys).size());
        for (String key : keys) {
            joined.add(join(key));
        }
        return joined;
    }

    // The underlying store's timeout, naming this store's caller's keys instead of the joined ones.
    private StoreTimeoutException unjoin(StoreTimeoutException e) {
        String head = prefix + "/";
        List<String> keys = new ArrayList<>(e.getKeys().size());
        for (String key : e.getKeys()) {
            keys.add(key.startsWith(head) ? key.substring(head.length()) : key);
        }
        return new StoreTimeoutException(toString(), keys, e.getTimeout(), e);
    }

    /** {@inheritDoc} */
    @Override
    public void set(String key, byte[] value) {
        store.set(join(key), value);
    }

    /** {@inheritDoc} */
    @Override
    public byte[] get(String key) {
        try {
            return store.get(join(key));
        } catch (StoreTimeoutException e) {
            throw unjoin(e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public long add(String key, long delta) {
        return store.add(join(key), delta);
    }

    /** {@inheritDoc} */
    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        return store.compareSet(join(key), expected, desired);
    }

    /** {@inheritDoc} */
    @Override
    public boolean deleteKey(String key) {
        return store.deleteKey(join(key));
    }

    /** {@inheritDoc} */
    @Override
    public boolean check(List<String> keys) {
        return store.check(join(keys));
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        try {
            store.waitFor(join(keys), timeout);
        } catch (StoreTimeoutException e) {
            throw unjoin(e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public long numKeys() {
        return store.numKeys();
    }

    /** {@inheritDoc} */
    @Override
    public void append(String key, byte[] value) {
        store.append(join(key), value);
    }

    /** {@inheritDoc} */
    @Override
    public List<byte[]> multiGet(List<String> keys) {
        try {
            return store.multiGet(join(keys));
        } catch (StoreTimeoutException e) {
            throw unjoin(e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public void multiSet(List<String> keys, List<byte[]> values) {
        store.multiSet(join(keys), values);
    }

    /** {@inheritDoc} */
    @Override
    public boolean hasExtendedApi() {
        return store.hasExtendedApi();
    }

    /** {@inheritDoc} */
    @Override
    public void queuePush(String key, byte[] value) {
        store.queuePush(join(key), value);
    }

    /** {@inheritDoc} */
    @Override
    public byte[] queuePop(String key) {
        try {
            return store.queuePop(join(key));
        } catch (StoreTimeoutException e) {
            throw unjoin(e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public Optional<byte[]> queueTryPop(String key) {
        return store.queueTryPop(join(key));
    }

    /** {@inheritDoc} */
    @Override
    public long queueLength(String key) {
        return store.queueLength(join(key));
    }

    /** {@inheritDoc} */
    @Override
    public Duration getTimeout() {
        return store.getTimeout();
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        store.setTimeout(timeout);
    }

    /**
     * Closes the underlying store if this prefix store owns it ({@link #owning}); otherwise does
     * nothing, since the underlying store belongs to whoever created it.
     */
    @Override
    public void close() {
        if (owns) {
            store.close();
        }
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "PrefixStore(" + prefix + ", " + store + ")";
    }
}
