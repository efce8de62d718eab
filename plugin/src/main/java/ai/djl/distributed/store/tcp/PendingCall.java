package ai.djl.distributed.store.tcp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A query sent by a client and the shape of the reply it awaits. */
final class PendingCall {

    /** The shape of a reply. */
    enum Reply {
        /** No reply: the call is done once the query is written. */
        NONE,
        /** One byte (CHECK). */
        U8,
        /** A little-endian i64 (ADD, GETNUMKEYS, DELETE_KEY, QUEUE_LEN). */
        I64,
        /** A little-endian u32 (PING). */
        U32,
        /** A u64 length and bytes (GET, COMPARE_SET). */
        BYTES,
        /** One BYTES per key (MULTI_GET). */
        MULTI_BYTES,
        /** An i64 queue length, then BYTES if it was positive (QUEUE_POP). */
        QUEUE_POP,
        /** STOP_WAITING, or WAIT_CANCELED when cancelled before the keys came (WAIT). */
        WAIT,
        /** WAIT_CANCELED (CANCEL_WAIT). */
        CANCEL
    }

    /** What a WAIT ended with. */
    enum WaitResult {
        STOPPED,
        CANCELED
    }

    final Reply reply;
    final int count; // values expected by MULTI_BYTES
    final String description;
    final CompletableFuture<Object> future = new CompletableFuture<>();
    final List<byte[]> values; // MULTI_BYTES progress

    PendingCall(Reply reply, int count, String description) {
        this.reply = reply;
        this.count = count;
        this.description = description;
        this.values = reply == Reply.MULTI_BYTES ? new ArrayList<>(count) : null;
    }
}
