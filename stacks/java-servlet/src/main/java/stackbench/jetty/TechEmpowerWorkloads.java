package stackbench.jetty;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/** The TechEmpower Framework Benchmarks test types, to their published rules. */
final class TechEmpowerWorkloads {
    private static final int WORLD_ROWS = 10_000;
    private static final String SELECT_WORLD = "SELECT id, randomNumber FROM World WHERE id = ?";
    private static final String UPDATE_WORLD = "UPDATE World SET randomNumber = ? WHERE id = ?";

    record Message(String message) {}

    record World(int id, int randomNumber) {}

    record Fortune(int id, String message) {}

    /** Jackson's ObjectMapper is thread-safe once configured; each response is still serialised anew. */
    private final ObjectMapper json = new ObjectMapper();
    private final Database database;

    TechEmpowerWorkloads(Database database) {
        this.database = database;
    }

    Reply json(Query query) throws JsonProcessingException {
        return Reply.json(json.writeValueAsBytes(new Message("Hello, World!")));
    }

    Reply plaintext(Query query) {
        return Reply.text("Hello, World!");
    }

    Reply db(Query query) throws SQLException, JsonProcessingException {
        try (Connection connection = database.connect();
             PreparedStatement select = connection.prepareStatement(SELECT_WORLD)) {
            return Reply.json(json.writeValueAsBytes(readWorld(select, randomId())));
        }
    }

    Reply queries(Query query) throws SQLException, JsonProcessingException {
        int count = query.techEmpowerCount("queries");
        try (Connection connection = database.connect();
             PreparedStatement select = connection.prepareStatement(SELECT_WORLD)) {
            return Reply.json(json.writeValueAsBytes(readWorlds(select, count)));
        }
    }

    Reply updates(Query query) throws SQLException, JsonProcessingException {
        int count = query.techEmpowerCount("queries");
        try (Connection connection = database.connect()) {
            World[] worlds;
            try (PreparedStatement select = connection.prepareStatement(SELECT_WORLD)) {
                worlds = readWorlds(select, count);
            }
            for (int i = 0; i < worlds.length; i++) {
                worlds[i] = new World(worlds[i].id(), newRandomNumber(worlds[i].randomNumber()));
            }
            writeWorlds(connection, worlds);
            return Reply.json(json.writeValueAsBytes(worlds));
        }
    }

    /**
     * One batch of single-row UPDATEs (allowed by the TFB rules). Rows are written in id order so
     * that concurrent requests lock rows in the same order and cannot deadlock each other.
     */
    private static void writeWorlds(Connection connection, World[] worlds) throws SQLException {
        World[] byId = worlds.clone();
        Arrays.sort(byId, Comparator.comparingInt(World::id));
        try (PreparedStatement update = connection.prepareStatement(UPDATE_WORLD)) {
            for (World world : byId) {
                update.setInt(1, world.randomNumber());
                update.setInt(2, world.id());
                update.addBatch();
            }
            update.executeBatch();
        }
    }

    Reply fortunes(Query query) throws SQLException {
        List<Fortune> fortunes = new ArrayList<>();
        try (Connection connection = database.connect();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT id, message FROM Fortune")) {
            while (rows.next()) {
                fortunes.add(new Fortune(rows.getInt(1), rows.getString(2)));
            }
        }
        fortunes.add(new Fortune(0, "Additional fortune added at request time."));
        fortunes.sort(Comparator.comparing(Fortune::message));
        return Reply.html(renderFortunes(fortunes));
    }

    private static String renderFortunes(List<Fortune> fortunes) {
        StringBuilder html = new StringBuilder(2048);
        html.append("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>");
        for (Fortune fortune : fortunes) {
            html.append("<tr><td>").append(fortune.id()).append("</td><td>");
            Html.appendEscaped(html, fortune.message());
            html.append("</td></tr>");
        }
        html.append("</table></body></html>");
        return html.toString();
    }

    private static World[] readWorlds(PreparedStatement select, int count) throws SQLException {
        World[] worlds = new World[count];
        for (int i = 0; i < count; i++) {
            worlds[i] = readWorld(select, randomId());
        }
        return worlds;
    }

    private static World readWorld(PreparedStatement select, int id) throws SQLException {
        select.setInt(1, id);
        try (ResultSet rows = select.executeQuery()) {
            if (!rows.next()) {
                throw new SQLException("World has no row with id " + id + "; the seed should hold ids 1.." + WORLD_ROWS);
            }
            return new World(rows.getInt(1), rows.getInt(2));
        }
    }

    private static int randomId() {
        return ThreadLocalRandom.current().nextInt(1, WORLD_ROWS + 1);
    }

    /** A new value in 1..10000 that differs from the old one, so every update really changes the row. */
    private static int newRandomNumber(int old) {
        int value;
        do {
            value = ThreadLocalRandom.current().nextInt(1, WORLD_ROWS + 1);
        } while (value == old);
        return value;
    }
}
