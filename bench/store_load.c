// SPDX-License-Identifier: Apache-2.0
/*
 * Closed-loop load on a TCPStore server (PyTorch's wire protocol, 2.2+): C connections, each with
 * one small request in flight. Each connection repeats SET k (8-byte value) + GET k, sent in one
 * write (SET has no reply), then ADD counter 1; set, get and add each count as one op. Prints the
 * ops/s of every second, then the total; exits non-zero on any protocol error.
 * usage: store_load HOST PORT CONNECTIONS SECONDS [spin]
 * With "spin" the client polls without ever sleeping (epoll_wait with a zero timeout): a client
 * that blocks pays a wake-up per reply, which at one connection is most of the round trip on a
 * virtual machine (its vCPU halts between replies), so the client itself would be what is measured.
 * Build: gcc -O2 -o store_load store_load.c   (bench/store_bench.sh does this in a temp dir)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int fd;
  int phase;          /* 0: awaiting GET reply (8 + 8 bytes), 1: awaiting ADD reply (8 bytes) */
  int want, got;
  unsigned char set_get[128], add[64];
  int set_get_len, add_len;
  unsigned char buf[64];
} conn_t;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static int put_str(unsigned char *p, const char *s, size_t n) {
  uint64_t len = n;
  memcpy(p, &len, 8); /* host order, as PyTorch's client */
  memcpy(p + 8, s, n);
  return 8 + (int)n;
}

static void send_all(int fd, const void *p, int n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      perror("write");
      exit(2);
    }
    c += w;
    n -= (int)w;
  }
}

static void issue(conn_t *c) {
  if (c->phase == 0) {
    send_all(c->fd, c->set_get, c->set_get_len);
    c->want = 16;
  } else {
    send_all(c->fd, c->add, c->add_len);
    c->want = 8;
  }
  c->got = 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || (argc > 5 && strcmp(argv[5], "spin") != 0)) {
    fprintf(stderr, "usage: %s HOST PORT CONNECTIONS SECONDS [spin]\n", argv[0]);
    return 1;
  }
  int nconn = atoi(argv[3]);
  int spin = argc > 5;
  double seconds = atof(argv[4]);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(atoi(argv[2]));
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
    fprintf(stderr, "bad host %s (expected an IPv4 address)\n", argv[1]);
    return 1;
  }
  int ep = epoll_create1(0);
  conn_t *cs = calloc(nconn, sizeof(conn_t));
  for (int i = 0; i < nconn; ++i) {
    conn_t *c = &cs[i];
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
      perror("connect");
      return 2;
    }
    unsigned char v[5] = {0};
    uint32_t magic = 0x3C85F7CE;
    memcpy(v + 1, &magic, 4);
    send_all(c->fd, v, 5); /* VALIDATE */
    char key[32];
    int kn = snprintf(key, sizeof key, "/load/k%d", i);
    unsigned char *p = c->set_get;
    *p++ = 1; /* SET */
    p += put_str(p, key, kn);
    p += put_str(p, "01234567", 8);
    *p++ = 3; /* GET */
    p += put_str(p, key, kn);
    c->set_get_len = (int)(p - c->set_get);
    p = c->add;
    *p++ = 4; /* ADD */
    p += put_str(p, "/load/counter", 13);
    int64_t one64 = 1;
    memcpy(p, &one64, 8);
    p += 8;
    c->add_len = (int)(p - c->add);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
  }
  struct epoll_event evs[256];
  double start = now(), tick = start + 1, end = start + seconds;
  long ops = 0, ops_tick = 0, total = 0;
  for (int i = 0; i < nconn; ++i) issue(&cs[i]);
  int sec = 0;
  for (;;) {
    int n = epoll_wait(ep, evs, 256, spin ? 0 : 100);
    for (int i = 0; i < n; ++i) {
      conn_t *c = evs[i].data.ptr;
      ssize_t r = read(c->fd, c->buf + c->got, c->want - c->got);
      if (r <= 0) {
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        fprintf(stderr, "server closed connection %d (%s)\n", (int)(c - cs), r ? strerror(errno) : "EOF");
        return 2;
      }
      c->got += (int)r;
      if (c->got < c->want) continue;
      if (c->phase == 0) {
        uint64_t len;
        memcpy(&len, c->buf, 8);
        if (len != 8 || memcmp(c->buf + 8, "01234567", 8) != 0) {
          fprintf(stderr, "bad GET reply on connection %d\n", (int)(c - cs));
          return 2;
        }
        ops += 2;
      } else {
        ops += 1;
      }
      c->phase ^= 1;
      issue(c);
    }
    double t = now();
    if (t >= tick) {
      ++sec;
      printf("second=%d ops_per_s=%.0f\n", sec, (ops - ops_tick) / (t - (tick - 1)));
      fflush(stdout);
      ops_tick = ops;
      tick += 1;
    }
    if (t >= end) {
      total = ops;
      printf("connections=%d seconds=%.2f ops=%ld ops_per_s=%.0f\n", nconn, t - start, total, total / (t - start));
      return 0;
    }
  }
}
