/// How many rows a listing keeps for a `limit N` before cutting back to N: 2N + 1024, saturating (a limit near
/// `Int.max` would overflow it).
func listingCutPoint(_ limit: Int) -> Int {
    let (doubled, o1) = limit.multipliedReportingOverflow(by: 2)
    let (sum, o2) = doubled.addingReportingOverflow(1024)
    return o1 || o2 ? Int.max : sum
}

extension CheckedQuery {
    /// For a listing (no reduction) whose table stages start with `sort` and then `limit N`, after any `select`s of
    /// columns: the sort's keys as columns of the listed rows (``rowColumns``) and N.
    var listTop: (keys: [(column: Int, descending: Bool)], limit: Int)? {
        guard reduction == nil else { return nil }
        var columns = Array(rowColumns.indices)  // the listed column behind each current column
        var sortKeys: [(column: Int, descending: Bool)]? = nil
        for stage in tableStages {
            switch stage {
            case .select(let selected):
                // Only a choice of columns keeps the listed rows' values; a computed column is not one of them.
                var chosen: [Int] = []
                for column in selected {
                    guard case .column(let index) = column.bound else { return nil }
                    chosen.append(columns[index])
                }
                columns = chosen
            case .sort(let keys) where sortKeys == nil: sortKeys = keys.map { (columns[$0.column], $0.descending) }
            case .limit(let n): return sortKeys.map { ($0, n) }
            case .where, .sort, .reduce: return nil
            }
        }
        return nil
    }

    /// For a listing (no reduction) whose table stages start with `limit N`, after any `select` (which changes
    /// columns, not rows): N, the most rows the result can have of those the listing reads.
    var listLimit: Int? {
        guard reduction == nil else { return nil }
        for stage in tableStages {
            switch stage {
            case .select: continue
            case .limit(let n): return n
            case .where, .sort, .reduce: return nil
            }
        }
        return nil
    }
}
