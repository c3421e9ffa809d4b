// Whether the client of a request that is still being handled went away. cpp-httplib 0.11 does
// not hand the socket to handlers, so it is found among the process's descriptors by the
// request's two endpoints (Linux: /proc/self/fd), then polled for a hang-up.
#pragma once

#include <httplib.h>

namespace ox::server {

// The connected socket this request came on, or -1 if it cannot be found. Valid while the handler
// runs (the worker holds the connection open until the handler returns).
int request_socket(const httplib::Request& req);

// True once the peer closed or reset the connection (POLLRDHUP / POLLHUP / POLLERR).
bool peer_closed(int fd);

}  // namespace ox::server
