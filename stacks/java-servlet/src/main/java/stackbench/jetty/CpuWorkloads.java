package stackbench.jetty;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/** The CPU and file workloads; every loop runs and every file is read on every call. */
final class CpuWorkloads {
    private final Path demoFile;
    private final Path randomFile;

    CpuWorkloads(Path fixturesDir) {
        demoFile = fixturesDir.resolve("demo.txt");
        randomFile = fixturesDir.resolve("random-64k.bin");
    }

    Reply hello(Query query) {
        return Reply.text("Hello World");
    }

    Reply data(Query query) {
        byte[] body = new byte[(int) query.requiredNumber("n", 0, 1_048_576)];
        Arrays.fill(body, (byte) '.');
        return new Reply(200, Reply.TEXT, body);
    }

    Reply concat(Query query) {
        long n = query.number("n", 1000, 0, 10_000_000);
        // StringBuilder is Java's way to append to a string; `s += "s"` would copy the whole
        // string each time (quadratic), which no Java programmer writes for a loop.
        StringBuilder text = new StringBuilder();
        for (long i = 0; i < n; i++) {
            text.append("s");
        }
        return Reply.text(text.toString());
    }

    Reply add(Query query) {
        long n = query.number("n", 1000, 0, 100_000_000);
        long counter = 0;
        for (long i = 0; i < n; i++) {
            counter += 1;
        }
        return Reply.text(Long.toString(counter));
    }

    Reply array(Query query) {
        long n = query.number("n", 1000, 0, 10_000_000);
        List<String> list = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            list.add("s");
        }
        return Reply.text(Integer.toString(list.size()));
    }

    Reply assoc(Query query) {
        long n = query.number("n", 1000, 0, 10_000_000);
        Map<String, String> map = new HashMap<>();
        for (long i = 0; i < n; i++) {
            map.put("s" + i, "s");
        }
        return Reply.text(Integer.toString(map.size()));
    }

    Reply readfile(Query query) throws IOException {
        long n = query.number("n", 100, 0, 100_000);
        long total = 0;
        for (long i = 0; i < n; i++) {
            // Blocking open/read/close each time, as the workload prescribes.
            try (InputStream in = new FileInputStream(demoFile.toFile())) {
                total += in.readAllBytes().length;
            }
        }
        return Reply.text(Long.toString(total));
    }

    Reply sha256(Query query) throws IOException, NoSuchAlgorithmException {
        long n = query.number("n", 1, 1, 100_000);
        byte[] file = Files.readAllBytes(randomFile);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] digest = sha.digest(file);
        for (long i = 1; i < n; i++) {
            sha.update(digest);
            sha.update(file);
            digest = sha.digest();
        }
        return Reply.text(HexFormat.of().formatHex(digest));
    }
}
