<?php
// Standalone timing entry point (docs/contracts.md section 5):
//   php script.php WORKLOAD QUERY ITERATIONS     e.g.  php script.php sha256 n=1000 1000
// Runs the same handler code as the HTTP stacks ITERATIONS times in this one process
// and prints the last body. Data workloads connect as DB_STRATEGY says.
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

use Stackbench\BlockingConnections;
use Stackbench\Router;

function fail(string $message): never
{
    fwrite(STDERR, "script.php: $message\n");
    exit(2);
}

if ($argc !== 4) {
    fail('usage: script.php WORKLOAD QUERY ITERATIONS (e.g. sha256 n=1000 1000)');
}
[, $workload, $queryString, $iterationsArg] = $argv;
if (preg_match('/^[1-9][0-9]{0,9}$/D', $iterationsArg) !== 1) {
    fail("ITERATIONS must be a positive decimal integer, got '$iterationsArg'");
}
parse_str($queryString, $query);

// `data` carries n in its path (/data/{n}); every other workload is /WORKLOAD?QUERY.
$path = $workload === 'data' ? '/data/' . ($query['n'] ?? '') : "/$workload";
$connections = new BlockingConnections();
$response = null;
for ($i = (int) $iterationsArg; $i > 0; $i--) {
    $response = Router::dispatch($path, $query, $connections);
}
if ($response->status !== 200) {
    fail("$workload answered status {$response->status}: " . trim($response->body));
}
echo $response->body;
