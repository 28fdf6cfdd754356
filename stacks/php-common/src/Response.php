<?php
declare(strict_types=1);

namespace Stackbench;

/** What a handler produces; each server glue turns it into its own HTTP response. */
final class Response
{
    public const TEXT = 'text/plain; charset=utf-8';
    public const HTML = 'text/html; charset=utf-8';
    public const JSON = 'application/json';

    public function __construct(
        public readonly int $status,
        public readonly string $contentType,
        public readonly string $body,
    ) {
    }

    public static function text(string $body, int $status = 200): self
    {
        return new self($status, self::TEXT, $body);
    }

    public static function html(string $body): self
    {
        return new self(200, self::HTML, $body);
    }

    public static function json(string $body): self
    {
        return new self(200, self::JSON, $body);
    }
}

/** A request parameter outside its contract range: answered with 400. */
final class BadRequest extends \RuntimeException
{
}

/** A data service that is not configured or not reachable: answered with 503. */
final class ServiceUnavailable extends \RuntimeException
{
}
