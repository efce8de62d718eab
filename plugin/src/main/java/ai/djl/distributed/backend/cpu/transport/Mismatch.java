package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.CommunicationException;

/** The errors for ranks that disagree on their collectives, naming both sides. */
final class Mismatch {

    private static final String RULE =
            " (every rank must issue the same collectives, with the same sizes and types, in the"
                    + " same order)";

    private Mismatch() {}

    /** The peer's message for collective {@code seq} was sent for another call than ours. */
    static CommunicationException differentCall(
            int peer, long seq, OpSignature mine, OpSignature theirs) {
        return new CommunicationException(
                "mismatch with rank "
                        + peer
                        + " at collective #"
                        + seq
                        + ": this rank called "
                        + mine
                        + ", rank "
                        + peer
                        + " called "
                        + theirs
                        + RULE,
                peer);
    }

    /** A message matched a receive by slot but not by signature or length. */
    static CommunicationException differentMessage(
            int peer, long slot, OpSignature mine, long expected, OpSignature theirs, long length) {
        String where = Frame.isCollective(slot) ? " at collective #" + Frame.seqOf(slot) : "";
        return new CommunicationException(
                "mismatch with rank "
                        + peer
                        + where
                        + ": this rank called "
                        + mine
                        + " expecting "
                        + expected
                        + " bytes, rank "
                        + peer
                        + " called "
                        + theirs
                        + " sending "
                        + length
                        + " bytes"
                        + RULE,
                peer);
    }

    /** The peer moved on to a later collective without sending what this one expects. */
    static CommunicationException skipped(
            int peer, long mySeq, OpSignature mine, long theirSeq, OpSignature theirs) {
        return elsewhere(
                peer,
                mySeq,
                mine,
                "has moved on to",
                theirSeq,
                theirs,
                " without sending this one's data");
    }

    /** The peer's post on the shared board belongs to another collective than this rank's. */
    static CommunicationException differentOrder(
            int peer, long mySeq, OpSignature mine, long theirSeq, OpSignature theirs) {
        return elsewhere(peer, mySeq, mine, "posted", theirSeq, theirs, " in its place");
    }

    private static CommunicationException elsewhere(
            int peer,
            long mySeq,
            OpSignature mine,
            String verb,
            long theirSeq,
            OpSignature theirs,
            String tail) {
        return new CommunicationException(
                "mismatch with rank "
                        + peer
                        + ": this rank is at collective #"
                        + mySeq
                        + " "
                        + mine
                        + ", but rank "
                        + peer
                        + " "
                        + verb
                        + " collective #"
                        + theirSeq
                        + " "
                        + theirs
                        + tail
                        + RULE,
                peer);
    }
}
