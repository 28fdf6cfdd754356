<?php
declare(strict_types=1);

namespace Stackbench;

/**
 * The CPU and file workloads of docs/contracts.md section 1. Each loop really runs on
 * every call (nothing is memoised), and the files are opened and read on every call.
 */
final class CpuWorkloads
{
    public const DATA_MAX = 1048576;

    public static function hello(): string
    {
        return 'Hello World';
    }

    public static function data(int $n): string
    {
        return str_repeat('.', $n);
    }

    public static function concat(int $n): string
    {
        $s = '';
        for ($i = 0; $i < $n; $i++) {
            $s .= 's';
        }
        return $s;
    }

    public static function add(int $n): string
    {
        $counter = 0;
        for ($i = 0; $i < $n; $i++) {
            $counter += 1;
        }
        return (string) $counter;
    }

    public static function array(int $n): string
    {
        $list = [];
        for ($i = 0; $i < $n; $i++) {
            $list[] = 's';
        }
        return (string) count($list);
    }

    public static function assoc(int $n): string
    {
        $map = [];
        for ($i = 0; $i < $n; $i++) {
            $map['s' . $i] = 's';
        }
        return (string) count($map);
    }

    /** N times: open demo.txt, read it whole, close it (PHP's blocking file API). */
    public static function readfile(int $n): string
    {
        $path = self::fixture('demo.txt');
        $total = 0;
        for ($i = 0; $i < $n; $i++) {
            $total += strlen(self::readWhole($path));
        }
        return (string) $total;
    }

    /** d1 = sha256(F), di = sha256(d(i-1) raw || F); F read from disk once per call. */
    public static function sha256(int $n): string
    {
        $file = self::readWhole(self::fixture('random-64k.bin'));
        $digest = hash('sha256', $file, true);
        for ($i = 2; $i <= $n; $i++) {
            // Incremental hashing avoids copying the 64 KiB file into a new string per round.
            $context = hash_init('sha256');
            hash_update($context, $digest);
            hash_update($context, $file);
            $digest = hash_final($context, true);
        }
        return bin2hex($digest);
    }

    private static function fixture(string $name): string
    {
        $dir = getenv('FIXTURES_DIR');
        if ($dir === false || $dir === '') {
            throw new \RuntimeException('FIXTURES_DIR is not set: the orchestrator must export it');
        }
        return $dir . '/' . $name;
    }

    private static function readWhole(string $path): string
    {
        $contents = @file_get_contents($path);
        if ($contents === false) {
            $reason = error_get_last()['message'] ?? 'unknown error';
            throw new \RuntimeException("cannot read $path: $reason");
        }
        return $contents;
    }
}
