import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/** Bundled example: a servlet-style ledger with a SQL injection and a safe path. */
public class Ledger {
    private final Connection conn;
    private final List<Long> entries = new ArrayList<>();

    public Ledger(Connection conn) {
        this.conn = conn;
    }

    public long balance() {
        long sum = 0;
        for (long e : entries) {
            if (e < 0 && sum < -e) {
                throw new IllegalStateException("overdraft");
            }
            sum += e;
        }
        return sum;
    }

    public void record(long amount) {
        switch (Long.signum(amount)) {
            case 0:
                return;
            case -1:
                entries.add(amount);
                break;
            default:
                entries.add(amount);
        }
    }

    public String find(HttpServletRequest request) throws SQLException {
        String account = request.getParameter("account");
        Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT owner FROM accounts WHERE id = '" + account + "'");
        try {
            return rs.next() ? rs.getString(1) : null;
        } finally {
            rs.close();
        }
    }

    public void handle(HttpServletRequest request, HttpServletResponse response) throws IOException {
        try {
            String owner = find(request);
            response.getWriter().println(owner == null ? "unknown" : owner);
        } catch (SQLException e) {
            response.sendError(500);
        }
        record(Long.parseLong(request.getParameter("amount")));
    }
}
