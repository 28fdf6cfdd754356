<?php
declare(strict_types=1);

namespace Stackbench;

/** The TechEmpower Framework Benchmarks test types, to their published rules. */
final class TechEmpower
{
    private const WORLD_ROWS = 10000;
    private const EXTRA_FORTUNE = 'Additional fortune added at request time.';

    public static function json(): string
    {
        // Serialised per request, as the rules demand.
        return json_encode(['message' => 'Hello, World!'], JSON_THROW_ON_ERROR);
    }

    public static function plaintext(): string
    {
        return 'Hello, World!';
    }

    /** One random World row as a JSON object. */
    public static function db(Connections $connections): string
    {
        $worlds = $connections->withMysql(static fn (\mysqli $db): array => self::randomWorlds($db, 1));
        return json_encode($worlds[0], JSON_THROW_ON_ERROR);
    }

    /** `$count` random World rows, one query each, as a JSON array. */
    public static function queries(Connections $connections, int $count): string
    {
        $worlds = $connections->withMysql(static fn (\mysqli $db): array => self::randomWorlds($db, $count));
        return json_encode($worlds, JSON_THROW_ON_ERROR);
    }

    /** Like queries, then every row gets a new random number, written back one UPDATE per row. */
    public static function updates(Connections $connections, int $count): string
    {
        $worlds = $connections->withMysql(static function (\mysqli $db) use ($count): array {
            $worlds = self::randomWorlds($db, $count);
            $update = $db->prepare('UPDATE World SET randomNumber = ? WHERE id = ?');
            $number = 0;
            $id = 0;
            $update->bind_param('ii', $number, $id);
            foreach ($worlds as &$world) {
                $world['randomNumber'] = $number = mt_rand(1, self::WORLD_ROWS);
                $id = $world['id'];
                $update->execute();
            }
            unset($world);
            $update->close();
            return $worlds;
        });
        return json_encode($worlds, JSON_THROW_ON_ERROR);
    }

    /** All fortunes plus one added now, sorted by message, in the TechEmpower template. */
    public static function fortunes(Connections $connections): string
    {
        $fortunes = $connections->withMysql(static function (\mysqli $db): array {
            $result = $db->query('SELECT id, message FROM Fortune');
            $rows = $result->fetch_all(MYSQLI_NUM);
            $result->free();
            return $rows;
        });
        $fortunes[] = [0, self::EXTRA_FORTUNE];
        usort($fortunes, static fn (array $x, array $y): int => strcmp($x[1], $y[1]));

        $html = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>'
            . '<tr><th>id</th><th>message</th></tr>';
        foreach ($fortunes as $fortune) {
            $html .= Html::row($fortune);
        }
        return $html . '</table></body></html>';
    }

    /** @return list<array{id: int, randomNumber: int}> */
    private static function randomWorlds(\mysqli $db, int $count): array
    {
        $select = $db->prepare('SELECT id, randomNumber FROM World WHERE id = ?');
        $id = 0;
        $select->bind_param('i', $id);
        $worlds = [];
        for ($i = 0; $i < $count; $i++) {
            $id = mt_rand(1, self::WORLD_ROWS);
            $select->execute();
            $select->bind_result($rowId, $randomNumber);
            if (!$select->fetch()) {
                throw new \RuntimeException("World row $id is missing: the seed must insert ids 1.."
                    . self::WORLD_ROWS);
            }
            $worlds[] = ['id' => $rowId, 'randomNumber' => $randomNumber];
            $select->free_result();
        }
        $select->close();
        return $worlds;
    }
}
