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

import ai.djl.distributed.rendezvous.DistributedEnv;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Picks the local address a rank listens on and publishes to its peers.
 *
 * <ol>
 *   <li>{@code DJL_DIST_SOCKET_IFNAME} (or gloo's {@code GLOO_SOCKET_IFNAME}) names an interface:
 *       its first IPv4 address, else its first address.
 *   <li>Otherwise, when {@code MASTER_ADDR} is not loopback: that address on the master's own host,
 *       elsewhere the address this host routes to it from. Never loopback, so remote peers can
 *       connect.
 *   <li>Otherwise (no master, or a master on this host) loopback: every rank is local.
 * </ol>
 */
public final class SocketInterfaces {

    /** The variable that names the interface. */
    public static final String IFNAME = "DJL_DIST_SOCKET_IFNAME";

    /** Gloo's name for {@link #IFNAME}, read where that is unset. */
    private static final String GLOO_IFNAME = "GLOO_SOCKET_IFNAME";

    private SocketInterfaces() {}

    /**
     * Returns the address to listen on.
     *
     * @param env the launcher's environment
     * @return the address
     * @throws IllegalArgumentException if the named interface does not exist or has no address,
     *     naming the variable that named it
     */
    public static InetAddress localAddress(DistributedEnv env) {
        // The variable is kept with the value: an error must name the one the user set.
        String variable = env.get(IFNAME).isPresent() ? IFNAME : GLOO_IFNAME;
        Optional<String> ifname = env.get(variable);
        if (ifname.isPresent()) {
            return interfaceAddress(variable, ifname.get());
        }
        Optional<String> master = env.get("MASTER_ADDR");
        try {
            if (master.isPresent()) {
                InetAddress m = InetAddress.getByName(master.get());
                if (!m.isLoopbackAddress()) {
                    // The master's own address is what its peers reach it by; elsewhere, the
                    // address this host uses to reach the master.
                    return NetworkInterface.getByInetAddress(m) != null ? m : routeTo(m);
                }
            }
            return InetAddress.getLoopbackAddress();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot choose a local address: " + e.getMessage(), e);
        }
    }

    private static InetAddress routeTo(InetAddress remote) throws SocketException {
        // Connecting a UDP socket sends nothing; it only asks the kernel for the route's source.
        try (DatagramSocket s = new DatagramSocket()) {
            s.connect(new InetSocketAddress(remote, 9));
            InetAddress local = s.getLocalAddress();
            if (local == null || local.isAnyLocalAddress()) {
                throw new SocketException("no route to " + remote);
            }
            return local;
        }
    }

    private static InetAddress interfaceAddress(String variable, String name) {
        try {
            NetworkInterface nif = NetworkInterface.getByName(name);
            if (nif == null) {
                List<String> names = new ArrayList<>();
                for (NetworkInterface n :
                        Collections.list(NetworkInterface.getNetworkInterfaces())) {
                    names.add(n.getName());
                }
                throw new IllegalArgumentException(
                        variable + ": '" + name + "' (expected: one of " + names + ")");
            }
            List<InetAddress> addresses = Collections.list(nif.getInetAddresses());
            for (InetAddress a : addresses) {
                if (a instanceof Inet4Address) {
                    return a;
                }
            }
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException(
                        variable + ": '" + name + "' (expected: an interface with an address)");
            }
            return addresses.get(0);
        } catch (SocketException e) {
            throw new UncheckedIOException(
                    "cannot read interface " + name + ": " + e.getMessage(), e);
        }
    }
}
