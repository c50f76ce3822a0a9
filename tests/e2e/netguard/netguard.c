/* LD_PRELOAD guard for the offline test: getaddrinfo() of a non-loopback name and connect() to a non-loopback
   address are appended to $NETGUARD_RECORD and refused. Catches lookups made from native code (onnxruntime's
   telemetry uploader uses libcurl, which never goes through Python's socket module). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void record(const char *what, const char *target) {
    const char *path = getenv("NETGUARD_RECORD");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) return;
    char line[600];
    int n = snprintf(line, sizeof line, "native %s %s pid=%d\n", what, target ? target : "(null)", (int)getpid());
    if (n > 0) { ssize_t ignored = write(fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1)); (void)ignored; }
    close(fd);
}

static int loopback_name(const char *node) {
    if (node == NULL) return 1; /* a passive or loopback lookup */
    if (!strcmp(node, "localhost") || !strcmp(node, "ip6-localhost") || !strcmp(node, "localhost.localdomain"))
        return 1;
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, node, &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, node, &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
    return 0;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
    static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    if (!real) real = dlsym(RTLD_NEXT, "getaddrinfo");
    if (!loopback_name(node)) {
        record("getaddrinfo", node);
        return EAI_NONAME;
    }
    return real(node, service, hints, res);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "connect");
    char text[INET6_ADDRSTRLEN] = "";
    int outside = 0;
    if (addr && addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        outside = (ntohl(in->sin_addr.s_addr) >> 24) != 127;
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    } else if (addr && addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        int mapped_loopback = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
        outside = !IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) && !mapped_loopback;
        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    }
    if (outside) {
        record("connect", text);
        errno = ECONNREFUSED;
        return -1;
    }
    return real(fd, addr, len);
}
