<?php
declare(strict_types=1);

namespace Stackbench;

/** Maps a request path and query to its workload; the one entry point of every PHP stack. */
final class Router
{
    private const N_MAX = 10000000;

    public static function dispatch(string $path, array $query, Connections $connections): Response
    {
        try {
            return self::route($path, $query, $connections);
        } catch (BadRequest $e) {
            return Response::text($e->getMessage() . "\n", 400);
        } catch (ServiceUnavailable $e) {
            return Response::text($e->getMessage() . "\n", 503);
        } catch (\RedisException $e) {
            return Response::text('Redis error: ' . $e->getMessage() . "\n", 503);
        } catch (\Throwable $e) {
            // Logged as well: a 500 under load must leave a trace in the server log.
            error_log("stackbench: $path failed: " . $e->getMessage());
            return Response::text("$path failed: " . $e->getMessage() . "\n", 500);
        }
    }

    private static function route(string $path, array $query, Connections $connections): Response
    {
        $n = static fn (int $default, int $min, int $max): int
            => QueryParams::int($query, 'n', $default, $min, $max);
        return match ($path) {
            '/hello' => Response::text(CpuWorkloads::hello()),
            '/concat' => Response::text(CpuWorkloads::concat($n(1000, 0, self::N_MAX))),
            '/add' => Response::text(CpuWorkloads::add($n(1000, 0, 100000000))),
            '/array' => Response::text(CpuWorkloads::array($n(1000, 0, self::N_MAX))),
            '/assoc' => Response::text(CpuWorkloads::assoc($n(1000, 0, self::N_MAX))),
            '/readfile' => Response::text(CpuWorkloads::readfile($n(100, 0, 100000))),
            '/sha256' => Response::text(CpuWorkloads::sha256($n(1, 1, 100000))),
            '/db-report' => Response::html(DataWorkloads::dbReport($connections)),
            '/mysql-row' => Response::text(DataWorkloads::mysqlRow($connections)),
            '/redis-get' => Response::text(DataWorkloads::redisGet($connections)),
            '/memcache-get' => Response::text(DataWorkloads::memcacheGet($connections)),
            '/json' => Response::json(TechEmpower::json()),
            '/plaintext' => Response::text(TechEmpower::plaintext()),
            '/db' => Response::json(TechEmpower::db($connections)),
            '/queries' => Response::json(TechEmpower::queries($connections, QueryParams::tfbQueries($query))),
            '/updates' => Response::json(TechEmpower::updates($connections, QueryParams::tfbQueries($query))),
            '/fortunes' => Response::html(TechEmpower::fortunes($connections)),
            default => self::routeData($path),
        };
    }

    /** `/data/{n}`: the only workload with its parameter in the path. */
    private static function routeData(string $path): Response
    {
        if (!str_starts_with($path, '/data/')) {
            return Response::text("no workload at $path\n", 404);
        }
        $n = QueryParams::decimal(substr($path, strlen('/data/')), 'n', 0, CpuWorkloads::DATA_MAX);
        return Response::text(CpuWorkloads::data($n));
    }
}
