#include "cpu_workloads.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "query.hpp"

namespace stackbench {
namespace {

// Parameter n with its default and range; nullopt means "answer 400".
std::optional<std::int64_t> param_n(const Request& req, std::int64_t fallback, std::int64_t min, std::int64_t max) {
    const auto raw = query_param(req.query, "n");
    if (!raw) return fallback;
    return parse_bounded(*raw, min, max);
}

Response bad_n(std::int64_t min, std::int64_t max) {
    return error(400, "n must be a decimal integer in " + std::to_string(min) + ".." + std::to_string(max) + "\n");
}

// Tells the optimiser the object is observed, so a loop that builds it cannot be folded away
// (the contract says every loop runs).
template <typename T>
void keep_alive(T& value) {
    asm volatile("" : : "g"(&value) : "memory");
}

// Reads a whole file with blocking POSIX calls: open, fstat, read until EOF, close.
std::string read_whole_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path);
    struct stat st {};
    ::fstat(fd, &st);
    std::string content(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t filled = 0;
    for (;;) {
        if (filled == content.size()) content.resize(content.size() * 2 + 4096);  // file grew meanwhile
        const ssize_t got = ::read(fd, content.data() + filled, content.size() - filled);
        if (got < 0) {
            ::close(fd);
            throw std::runtime_error("cannot read " + path);
        }
        if (got == 0) break;
        filled += static_cast<std::size_t>(got);
    }
    ::close(fd);
    content.resize(filled);
    return content;
}

struct EvpContextDeleter {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

}  // namespace

Response hello(const Request&) { return text("Hello World"); }

Response data(const Request& req) {
    constexpr std::int64_t max = 1048576;
    const std::string_view prefix = "/data/";
    const auto n = parse_bounded(req.path.substr(prefix.size()), 0, max);
    if (!n) return bad_n(0, max);
    return text(std::string(static_cast<std::size_t>(*n), '.'));
}

Response concat(const Request& req) {
    const auto n = param_n(req, 1000, 0, 10000000);
    if (!n) return bad_n(0, 10000000);
    std::string s;
    for (std::int64_t i = 0; i < *n; ++i) s += 's';
    return text(std::move(s));
}

Response add(const Request& req) {
    const auto n = param_n(req, 1000, 0, 100000000);
    if (!n) return bad_n(0, 100000000);
    std::int64_t counter = 0;
    for (std::int64_t i = 0; i < *n; ++i) {
        counter += 1;
        asm volatile("" : "+r"(counter));  // one real add per iteration, no closed-form folding
    }
    return text(std::to_string(counter));
}

Response array(const Request& req) {
    const auto n = param_n(req, 1000, 0, 10000000);
    if (!n) return bad_n(0, 10000000);
    std::vector<std::string> items;
    for (std::int64_t i = 0; i < *n; ++i) items.push_back("s");
    keep_alive(items);
    return text(std::to_string(items.size()));
}

Response assoc(const Request& req) {
    const auto n = param_n(req, 1000, 0, 10000000);
    if (!n) return bad_n(0, 10000000);
    std::unordered_map<std::string, std::string> map;
    for (std::int64_t i = 0; i < *n; ++i) map["s" + std::to_string(i)] = "s";
    keep_alive(map);
    return text(std::to_string(map.size()));
}

Response readfile(const Request& req, const std::string& fixtures_dir) {
    const auto n = param_n(req, 100, 0, 100000);
    if (!n) return bad_n(0, 100000);
    const std::string path = fixtures_dir + "/demo.txt";
    std::uint64_t total = 0;
    for (std::int64_t i = 0; i < *n; ++i) total += read_whole_file(path).size();
    return text(std::to_string(total));
}

Response sha256(const Request& req, const std::string& fixtures_dir) {
    const auto n = param_n(req, 1, 1, 100000);
    if (!n) return bad_n(1, 100000);
    const std::string file = read_whole_file(fixtures_dir + "/random-64k.bin");
    std::unique_ptr<EVP_MD_CTX, EvpContextDeleter> ctx(EVP_MD_CTX_new());
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    for (std::int64_t i = 0; i < *n; ++i) {
        EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
        if (i > 0) EVP_DigestUpdate(ctx.get(), digest, digest_len);  // d(i-1) as raw bytes
        EVP_DigestUpdate(ctx.get(), file.data(), file.size());
        EVP_DigestFinal_ex(ctx.get(), digest, &digest_len);
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < digest_len; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 0xf];
    }
    return text(std::move(out));
}

Response tfb_json(const Request&) {
    const nlohmann::json message = {{"message", "Hello, World!"}};  // serialised per request (TFB rule)
    return Response{200, "application/json", message.dump()};
}

Response tfb_plaintext(const Request&) { return Response{200, "text/plain", "Hello, World!"}; }

}  // namespace stackbench
