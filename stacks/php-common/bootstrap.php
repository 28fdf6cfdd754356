<?php
// Loads the shared workload code. Every stack (php-fpm, mod_php, Swoole, the timing
// script) includes this one file; with opcache the includes cost no recompilation.
declare(strict_types=1);

require_once __DIR__ . '/src/Response.php';
require_once __DIR__ . '/src/QueryParams.php';
require_once __DIR__ . '/src/CpuWorkloads.php';
require_once __DIR__ . '/src/ServiceConfig.php';
require_once __DIR__ . '/src/Connections.php';
require_once __DIR__ . '/src/ConnectionFactory.php';
require_once __DIR__ . '/src/BlockingConnections.php';
require_once __DIR__ . '/src/Html.php';
require_once __DIR__ . '/src/DataWorkloads.php';
require_once __DIR__ . '/src/TechEmpower.php';
require_once __DIR__ . '/src/Router.php';
