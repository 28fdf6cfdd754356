<?php
declare(strict_types=1);

namespace Stackbench;

final class Html
{
    /** Escapes text for an HTML element body or attribute (& < > " ' all escaped). */
    public static function escape(string|int $text): string
    {
        return htmlspecialchars((string) $text, ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML401, 'UTF-8');
    }

    /** One `<tr>` of `<td>` cells, each escaped. */
    public static function row(array $cells): string
    {
        $html = '<tr>';
        foreach ($cells as $cell) {
            $html .= '<td>' . self::escape($cell) . '</td>';
        }
        return $html . '</tr>';
    }
}
