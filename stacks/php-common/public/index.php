<?php
// Front controller for the SAPIs that run one script per request (php-fpm, mod_php):
// every URL is routed here by the web server's config.
declare(strict_types=1);

require __DIR__ . '/../bootstrap.php';

$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
$response = Stackbench\Router::dispatch(is_string($path) ? $path : '/', $_GET, new Stackbench\BlockingConnections());

http_response_code($response->status);
header('Content-Type: ' . $response->contentType);
// An explicit length lets nginx/Apache frame the body without chunked encoding.
header('Content-Length: ' . strlen($response->body));
echo $response->body;
