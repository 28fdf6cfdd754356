#include "server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>
#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "routes.hpp"

namespace stackbench {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using reuse_port = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

// The RFC 7231 Date header, formatted at most once per second per thread (TechEmpower allows a
// once-per-second cache; formatting per response would only measure strftime).
const std::string& http_date() {
    thread_local std::time_t formatted_at = 0;
    thread_local std::string value;
    const std::time_t now = std::time(nullptr);
    if (now != formatted_at) {
        std::tm tm{};
        gmtime_r(&now, &tm);
        char buf[64];
        const std::size_t len = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        value.assign(buf, len);
        formatted_at = now;
    }
    return value;
}

struct Shared {
    const Config& config;
    net::thread_pool& blocking_pool;
};

// One keep-alive connection: read a request, answer it, repeat. Requests on one connection are
// handled strictly in order, which also makes pipelined requests safe.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(tcp::socket socket, const Shared& shared) : socket_(std::move(socket)), shared_(shared) {}

    void start() { read_request(); }

private:
    void read_request() {
        request_ = {};
        http::async_read(socket_, buffer_, request_,
                         [self = shared_from_this()](boost::beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(boost::beast::error_code ec) {
        if (ec) return close();  // end of stream, reset or malformed request
        const std::string_view target(request_.target().data(), request_.target().size());
        const auto question = target.find('?');
        const Request req{target.substr(0, question),
                          question == std::string_view::npos ? std::string_view{} : target.substr(question + 1)};
        const Route* route = find_route(req.path);
        if (!route) return write(error(404, "no such endpoint\n"));
        // GET only: a HEAD answer would need its body suppressed, and no workload uses HEAD.
        if (request_.method() != http::verb::get) return write(error(405, "only GET is served\n"));
        if (route->execution == Execution::EventLoop) return write(run_route(*route, req, shared_.config));
        // Blocking client calls would stall every connection of this event loop, so they run on
        // the pool; the answer is posted back to this connection's own event-loop thread.
        net::post(shared_.blocking_pool, [self = shared_from_this(), route, req] {
            Response response = run_route(*route, req, self->shared_.config);
            net::post(self->socket_.get_executor(),
                      [self, response = std::move(response)]() mutable { self->write(std::move(response)); });
        });
    }

    void write(Response response) {
        response_ = {};
        response_.version(request_.version());
        response_.result(response.status);
        response_.set(http::field::server, "Boost.Beast");
        response_.set(http::field::date, http_date());
        response_.set(http::field::content_type, response.content_type);
        response_.body() = std::move(response.body);
        response_.keep_alive(request_.keep_alive());
        response_.prepare_payload();
        http::async_write(socket_, response_, [self = shared_from_this()](boost::beast::error_code ec, std::size_t) {
            self->on_write(ec);
        });
    }

    void on_write(boost::beast::error_code ec) {
        if (ec || !response_.keep_alive()) return close();
        read_request();
    }

    void close() {
        boost::beast::error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_send, ignored);
        socket_.close(ignored);
    }

    tcp::socket socket_;
    const Shared& shared_;
    boost::beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    http::response<http::string_body> response_;
};

// Accepts connections for one event loop. Every loop has its own listening socket bound with
// SO_REUSEPORT, so the kernel spreads new connections across the loops: no shared accept lock
// and no hand-off between threads (the approach of the fastest TechEmpower C++ servers).
class Listener {
public:
    Listener(net::io_context& ioc, const tcp::endpoint& endpoint, const Shared& shared)
        : ioc_(ioc), acceptor_(ioc), retry_timer_(ioc), shared_(shared) {
        acceptor_.open(endpoint.protocol());
        acceptor_.set_option(net::socket_base::reuse_address(true));
        acceptor_.set_option(reuse_port(true));
        acceptor_.bind(endpoint);
        acceptor_.listen(net::socket_base::max_listen_connections);
    }

    void accept() {
        acceptor_.async_accept(ioc_, [this](boost::beast::error_code ec, tcp::socket socket) {
            if (ec == net::error::operation_aborted) return;
            if (!ec) {
                // Responses are small: do not wait for Nagle. The error-code overload, because a peer
                // that already reset must not throw out of the event loop.
                boost::beast::error_code ignored;
                socket.set_option(tcp::no_delay(true), ignored);
                std::make_shared<Session>(std::move(socket), shared_)->start();
                accept();
                return;
            }
            // e.g. EMFILE under overload: back off briefly instead of spinning on the error, and
            // keep serving the connections already open.
            std::cerr << "accept failed: " << ec.message() << "\n";
            retry_timer_.expires_after(std::chrono::milliseconds(10));
            retry_timer_.async_wait([this](boost::beast::error_code wait_ec) {
                if (!wait_ec) accept();
            });
        });
    }

private:
    net::io_context& ioc_;
    tcp::acceptor acceptor_;
    net::steady_timer retry_timer_;
    const Shared& shared_;
};

}  // namespace

int run_server(const Config& config) {
    net::thread_pool blocking_pool(config.pool_size);
    const Shared shared{config, blocking_pool};
    const tcp::endpoint endpoint(net::ip::make_address(config.host), static_cast<unsigned short>(config.port));

    // Concurrency hint 1: each io_context is run by exactly one thread, so asio can skip locking.
    std::vector<std::unique_ptr<net::io_context>> loops;
    std::vector<std::unique_ptr<Listener>> listeners;
    for (unsigned i = 0; i < config.workers; ++i) {
        loops.push_back(std::make_unique<net::io_context>(1));
        listeners.push_back(std::make_unique<Listener>(*loops.back(), endpoint, shared));
        listeners.back()->accept();
    }

    net::signal_set signals(*loops.front(), SIGTERM, SIGINT);
    signals.async_wait([&loops](boost::beast::error_code, int) {
        for (auto& loop : loops) loop->stop();
    });

    std::cerr << "cpp-beast listening on " << config.host << ":" << config.port << " with " << config.workers
              << " event loops and " << config.pool_size << " blocking-call threads\n";
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < config.workers; ++i) threads.emplace_back([&loops, i] { loops[i]->run(); });
    loops.front()->run();
    for (auto& t : threads) t.join();
    blocking_pool.stop();
    blocking_pool.join();
    return 0;
}

}  // namespace stackbench
