<?php
declare(strict_types=1);

namespace Stackbench;

/** The data workloads of docs/contracts.md section 1 (MariaDB, Redis, memcached). */
final class DataWorkloads
{
    private const REPORT_TABLES = ['a', 'b'];

    /** Two SELECTs of 300 rows each, rendered as two HTML tables. */
    public static function dbReport(Connections $connections): string
    {
        $sections = $connections->withMysql(static function (\mysqli $db): string {
            $html = '';
            foreach (self::REPORT_TABLES as $table) {
                $result = $db->query("SELECT id, name, value, created FROM $table ORDER BY id");
                $html .= self::reportTable($table, $result->fetch_all(MYSQLI_NUM));
                $result->free();
            }
            return $html;
        });
        return '<!DOCTYPE html><html><head><title>Report</title></head><body>'
            . $sections . '</body></html>';
    }

    public static function mysqlRow(Connections $connections): string
    {
        return $connections->withMysql(static function (\mysqli $db): string {
            $row = $db->query('SELECT name FROM test')->fetch_row();
            if ($row === null) {
                throw new \RuntimeException('table test is empty: the seed must insert one row');
            }
            return (string) $row[0];
        });
    }

    public static function redisGet(Connections $connections): string
    {
        return $connections->withRedis(static function (\Redis $redis): string {
            $value = $redis->get('test');
            if ($value === false) {
                throw new \RuntimeException('Redis key test is missing: the seed must set it');
            }
            return $value;
        });
    }

    public static function memcacheGet(Connections $connections): string
    {
        return $connections->withMemcached(static function (\Memcached $memcached): string {
            $value = $memcached->get('test');
            if ($value !== false) {
                return (string) $value;
            }
            if ($memcached->getResultCode() === \Memcached::RES_NOTFOUND) {
                throw new \RuntimeException('memcached key test is missing: the seed must set it');
            }
            throw new ServiceUnavailable('memcached get failed: ' . $memcached->getResultMessage());
        });
    }

    /** @param list<array{0: string, 1: string, 2: string, 3: string}> $rows id, name, value, created */
    private static function reportTable(string $table, array $rows): string
    {
        $html = '<h1>' . Html::escape($table) . '</h1><table>'
            . '<tr><th>id</th><th>name</th><th>value</th><th>created</th></tr>';
        foreach ($rows as $row) {
            $html .= Html::row($row);
        }
        return $html . '</table>';
    }
}
