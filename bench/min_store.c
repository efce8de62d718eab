// SPDX-License-Identifier: Apache-2.0
/*
 * A minimal TCPStore server in C (PyTorch's wire protocol, 2.2+), the floor any server on this
 * machine can reach: one thread, one level-triggered epoll loop, accept drained in batches, every
 * request parsed from one read and the replies of a read written with one write. It serves what the
 * benchmarks use (VALIDATE, PING, SET, GET, ADD, CHECK, WAIT on keys, GETNUMKEYS) and drops a
 * connection on anything else. It is no product: no limits, no CANCEL_WAIT, keys never freed.
 * usage: min_store PORT   (prints "ready" once listening on 127.0.0.1:PORT)
 * Build: gcc -O2 -o min_store min_store.c   (bench/store_bench.sh does this in a temp dir)
 */
#define _GNU_SOURCE
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
#include <unistd.h>

#define NBUCKETS (1 << 16)
typedef struct entry {
  struct entry *next;
  char *key, *val;
  uint64_t klen, vlen;
  int *waiters, nwait, capwait; /* fds waiting on this key */
} entry_t;
static entry_t *table[NBUCKETS];
static long nkeys;

typedef struct {
  unsigned char *in;
  size_t inlen, incap;
  int missing; /* keys a WAIT still misses */
} conn_t;
static conn_t *conns;
static int maxfd = 1 << 20;

static uint64_t hash(const char *k, uint64_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
  return h;
}
static entry_t *find(const char *k, uint64_t n, int create) {
  entry_t **b = &table[hash(k, n) & (NBUCKETS - 1)];
  for (entry_t *e = *b; e; e = e->next)
    if (e->klen == n && memcmp(e->key, k, n) == 0) return e;
  if (!create) return NULL;
  entry_t *e = calloc(1, sizeof *e);
  e->key = malloc(n ? n : 1);
  memcpy(e->key, k, n);
  e->klen = n;
  e->vlen = (uint64_t)-1; /* no value yet: a placeholder for waiters */
  e->next = *b;
  *b = e;
  return e;
}
static int has(entry_t *e) { return e && e->vlen != (uint64_t)-1; }

static void out_put(unsigned char **o, const void *p, size_t n) { memcpy(*o, p, n); *o += n; }
static void send_now(int fd, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) { if (errno == EINTR) continue; return; } /* the peer is gone: its close follows */
    p += w; n -= (size_t)w;
  }
}
static void store(entry_t *e, const char *v, uint64_t n) {
  if (!has(e)) ++nkeys;
  free(e->val);
  e->val = malloc(n ? n : 1);
  memcpy(e->val, v, n);
  e->vlen = n;
  for (int i = 0; i < e->nwait; ++i) { /* wake those whose last missing key this was */
    int fd = e->waiters[i];
    if (--conns[fd].missing == 0) { unsigned char z = 0; send_now(fd, &z, 1); }
  }
  e->nwait = 0;
}

/* Parses one request at p (n bytes); returns its length, 0 if incomplete, -1 if unsupported. */
static long serve(int fd, unsigned char *p, size_t n, unsigned char **o) {
  size_t at = 1;
#define NEED(k) do { if (n < at + (k)) return 0; } while (0)
#define U64(x) do { NEED(8); memcpy(&(x), p + at, 8); at += 8; } while (0)
#define STR(s, l) do { U64(l); NEED(l); (s) = (char *)p + at; at += (l); } while (0)
  uint64_t kl, vl, cnt;
  char *k, *v;
  switch (p[0]) {
  case 0: NEED(4); return 5; /* VALIDATE */
  case 13: NEED(4); out_put(o, p + 1, 4); return 5; /* PING: echo */
  case 1: STR(k, kl); STR(v, vl); store(find(k, kl, 1), v, vl); return (long)at;
  case 3: { /* GET */
    STR(k, kl);
    entry_t *e = find(k, kl, 0);
    uint64_t len = has(e) ? e->vlen : 0;
    out_put(o, &len, 8);
    if (len) out_put(o, e->val, len);
    return (long)at;
  }
  case 4: { /* ADD */
    int64_t d, cur = 0;
    STR(k, kl); U64(d);
    entry_t *e = find(k, kl, 1);
    if (has(e)) { char tmp[32]; size_t l = e->vlen < 31 ? e->vlen : 31; memcpy(tmp, e->val, l); tmp[l] = 0; cur = strtoll(tmp, NULL, 10); }
    cur += d;
    char s[32];
    int sl = snprintf(s, sizeof s, "%lld", (long long)cur);
    store(e, s, (uint64_t)sl);
    out_put(o, &cur, 8);
    return (long)at;
  }
  case 5: case 6: { /* CHECK, WAIT: n keys */
    U64(cnt);
    size_t start = at;
    for (uint64_t i = 0; i < cnt; ++i) { STR(k, kl); }
    int missing = 0;
    at = start;
    for (uint64_t i = 0; i < cnt; ++i) {
      STR(k, kl);
      entry_t *e = find(k, kl, p[0] == 6);
      if (!has(e)) {
        ++missing;
        if (p[0] == 6) {
          if (e->nwait == e->capwait) { e->capwait = e->capwait ? 2 * e->capwait : 4; e->waiters = realloc(e->waiters, e->capwait * sizeof(int)); }
          e->waiters[e->nwait++] = fd;
        }
      }
    }
    unsigned char r = p[0] == 5 ? (missing ? 1 : 0) : 0;
    if (p[0] == 5 || !missing) out_put(o, &r, 1);
    else conns[fd].missing = missing;
    return (long)at;
  }
  case 7: { int64_t c = nkeys; out_put(o, &c, 8); return 1; }
  default: return -1;
  }
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s PORT\n", argv[0]); return 1; }
  conns = calloc(maxfd, sizeof(conn_t));
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons(atoi(argv[1]));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 65535)) { perror("bind/listen"); return 2; }
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls}, evs[512];
  epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  printf("ready\n");
  fflush(stdout);
  static unsigned char outbuf[1 << 20];
  for (;;) {
    int n = epoll_wait(ep, evs, 512, -1);
    for (int i = 0; i < n; ++i) {
      int fd = evs[i].data.fd;
      if (fd == ls) {
        for (int c; (c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0;) { /* drain the queue */
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
        }
        continue;
      }
      conn_t *c = &conns[fd];
      if (c->incap - c->inlen < 65536) { c->incap = c->incap * 2 + 65536; c->in = realloc(c->in, c->incap); }
      ssize_t r = read(fd, c->in + c->inlen, c->incap - c->inlen);
      if (r <= 0) {
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      drop:
        close(fd); /* a waiter's fd stays listed: a later write to it fails harmlessly */
        free(c->in);
        memset(c, 0, sizeof *c);
        continue;
      }
      c->inlen += (size_t)r;
      unsigned char *o = outbuf;
      size_t at = 0;
      while (at < c->inlen && o - outbuf < (long)sizeof outbuf - 65536) {
        long used = serve(fd, c->in + at, c->inlen - at, &o);
        if (used < 0) goto drop;
        if (used == 0) break;
        at += (size_t)used;
      }
      memmove(c->in, c->in + at, c->inlen - at);
      c->inlen -= at;
      if (o > outbuf) send_now(fd, outbuf, (size_t)(o - outbuf));
    }
  }
}
