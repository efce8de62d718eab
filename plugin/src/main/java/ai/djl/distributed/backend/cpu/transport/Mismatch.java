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
