/// A screen funnel's `screen_cid` (rule 3): per step, the client id (`meta.screen_cid`) that the most sessions in
/// scope carry at the step's screen index, ties to the smallest in UTF-8 byte order.
///
/// A session counts once for each distinct id its events carry at the index, whichever events they are: the rule
/// depends on no order of the events, so every way a store reads a session (a fold in key order, rows in time order)
/// gives the same counts.
enum ScreenClientIDs {
    /// The name of the column.
    static let column = "screen_cid"

    /// The id of the most sessions in `counts`, ties to the smallest in UTF-8 byte order (as ClickHouse orders
    /// strings); nil when there is none.
    /// - Complexity: O(n) for n distinct ids.
    static func mostFrequent(_ counts: [String: Int]) -> String? {
        var best: (id: String, sessions: Int)?
        for (id, sessions) in counts {
            guard let current = best else {
                best = (id, sessions)
                continue
            }
            if sessions > current.sessions
                || sessions == current.sessions && id.utf8.lexicographicallyPrecedes(current.id.utf8)
            {
                best = (id, sessions)
            }
        }
        return best?.id
    }
}
