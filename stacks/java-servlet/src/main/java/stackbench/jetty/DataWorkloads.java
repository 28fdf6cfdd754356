package stackbench.jetty;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/** db-report, mysql-row, redis-get and memcache-get: each call talks to its service. */
final class DataWorkloads {
    private static final DateTimeFormatter CREATED = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Services services;

    DataWorkloads(Services services) {
        this.services = services;
    }

    Reply dbReport(Query query) throws SQLException {
        StringBuilder html = new StringBuilder(64 * 1024);
        html.append("<!DOCTYPE html><html><head><title>Report</title></head><body>\n");
        try (Connection connection = services.database().connect()) {
            appendTable(connection, "a", html);
            appendTable(connection, "b", html);
        }
        html.append("</body></html>\n");
        return Reply.html(html.toString());
    }

    /** The table name is one of two constants, never request input. */
    private static void appendTable(Connection connection, String table, StringBuilder html) throws SQLException {
        html.append("<h1>").append(table).append("</h1><table><tr><th>id</th><th>name</th><th>value</th><th>created</th></tr>\n");
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT id, name, value, created FROM " + table + " ORDER BY id")) {
            while (rows.next()) {
                html.append("<tr><td>").append(rows.getLong(1)).append("</td><td>");
                Html.appendEscaped(html, rows.getString(2));
                html.append("</td><td>").append(rows.getLong(3)).append("</td><td>");
                LocalDateTime created = rows.getObject(4, LocalDateTime.class);
                html.append(created == null ? "" : CREATED.format(created)).append("</td></tr>\n");
            }
        }
        html.append("</table>\n");
    }

    Reply mysqlRow(Query query) throws SQLException {
        try (Connection connection = services.database().connect();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT name FROM test")) {
            if (!rows.next()) {
                throw new SQLException("table test is empty; the seed should hold one row 'test'");
            }
            return Reply.text(rows.getString(1));
        }
    }

    Reply redisGet(Query query) {
        String value = services.redis().get("test");
        if (value == null) {
            throw new IllegalStateException("Redis has no key 'test'; the seed should set test=test");
        }
        return Reply.text(value);
    }

    Reply memcacheGet(Query query) {
        Object value = services.memcached().get("test");
        if (value == null) {
            throw new IllegalStateException("memcached has no key 'test'; the seed should set test=test");
        }
        return Reply.text(value.toString());
    }
}
