<?php
// php-swoole: the shared workload router on Swoole\Http\Server (one event loop and
// coroutine scheduler per worker process). Started by stack.toml in the foreground.
declare(strict_types=1);

require __DIR__ . '/../php-common/bootstrap.php';
require __DIR__ . '/src/SwooleConnections.php';

use Stackbench\Router;
use Stackbench\Swoole\SwooleConnections;
use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Http\Server;

function required_env(string $name): string
{
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "php-swoole: environment variable $name is not set (the orchestrator sets it)\n");
        exit(2);
    }
    return $value;
}

$host = required_env('HOST');
$port = (int) required_env('PORT');
$workers = (int) required_env('WORKERS');
$runDir = required_env('RUN_DIR');

// SWOOLE_BASE: every worker accepts and serves its own connections (like nginx), with no
// reactor-to-worker IPC hop; the mode Swoole recommends for stateless HTTP services.
$server = new Server($host, $port, SWOOLE_BASE, SWOOLE_SOCK_TCP);
$server->set([
    // One worker (event loop) per server core: coroutines provide the concurrency.
    'worker_num' => $workers,
    'enable_coroutine' => true,
    // Coroutine-aware sockets for mysqli (mysqlnd streams) and phpredis. File I/O is
    // deliberately not hooked: /readfile must use PHP's blocking file API (contract).
    'hook_flags' => SWOOLE_HOOK_TCP | SWOOLE_HOOK_UNIX,
    // Never recycle workers mid-measurement: the code does not leak.
    'max_request' => 0,
    'backlog' => 4096,
    'open_tcp_nodelay' => true,
    'http_compression' => false,
    'http_parse_cookie' => false,
    'http_parse_post' => false,
    // /concat?n=10000000 answers 10 MB in one end(): both limits default to 2 MB.
    'buffer_output_size' => 16 * 1024 * 1024,
    'socket_buffer_size' => 32 * 1024 * 1024,
    'daemonize' => false,
    'pid_file' => "$runDir/swoole.pid",
    'log_level' => SWOOLE_LOG_WARNING,
]);

// Each worker process gets its own connections (pools cannot cross a fork).
$connections = null;
$server->on('workerStart', static function () use (&$connections): void {
    $connections = new SwooleConnections();
});

$server->on('request', static function (Request $request, Response $response) use (&$connections): void {
    // request_uri is the path only; the query string is parsed into $request->get.
    $result = Router::dispatch($request->server['request_uri'] ?? '/', $request->get ?? [], $connections);
    $response->status($result->status);
    $response->header('Content-Type', $result->contentType);
    // Swoole adds Server, Date, Connection and Content-Length itself.
    $response->end($result->body);
});

$server->start();
