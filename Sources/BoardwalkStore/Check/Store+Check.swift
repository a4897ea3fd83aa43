import BoardwalkCodec
import BoardwalkModel

extension Store {
    /// Verifies the store: LMDB's B-tree pages are sound (read from the file, before any cursor touches them: a
    /// damaged page would crash liblmdb, so the check stops there and reports it); every block and every record in
    /// it decodes; every index entry (`sessions`,
    /// `batches`, `onboarding_sessions`) points to an existing event and every event has its entries;
    /// `strings` is dense without repeats; the counters in `meta` and `onboardings` match what is stored.
    /// Runs in one read transaction, concurrently with writers.
    ///
    /// A report with problems marks the store damaged (``damageFound``), and appends refuse it; a report without
    /// removes the mark.
    /// - Returns: a report listing what is wrong; damage never traps.
    /// - Throws: ``StoreError`` (``StoreError/Kind/system`` or ``StoreError/Kind/lmdb``) only when LMDB itself cannot
    ///   be read.
    /// - Complexity: O(N) for N events plus O(log N) per block; memory O(N) (9 bytes per seq) plus
    ///   O(sessions + strings).
    public func check() throws -> CheckReport {
        // LMDB's own pages first, read from the file: liblmdb trusts them, and a cursor over a damaged branch or leaf
        // page can assert or read out of bounds. Nothing else runs on damaged trees. The walk needs its snapshot's
        // meta page, which another process's commits can overwrite: it tries again with a new snapshot.
        var report = CheckReport()
        guard let problems = try readRetryingPagesMoved({ try $0.txn.checkPages() }) else {
            report.add(
                "LMDB pages: not checked: another process committed faster than the check could read the meta "
                    + "pages, 100 times; run check again when appends pause")
            return report
        }
        for problem in problems { report.add("LMDB pages: " + problem) }
        if report.isOK { report = try read { snapshot in try snapshot.check() } }
        // Appends refuse a damaged store until a check passes (Store+Damage.swift).
        if report.isOK {
            clearDamageMark()
        } else {
            let first = report.problems.first ?? "unlisted"
            markDamaged(StoreError(.corrupt, "check found \(report.problemCount) problem(s), the first: \(first)"))
        }
        return report
    }

    /// ``read(_:)`` for a body that walks LMDB's pages (``Transaction/checkPages(limit:mainOnly:trees:)``), which
    /// needs its snapshot's meta page: another process's commits can overwrite it (``PagesMoved``), and the body runs
    /// again in a new snapshot, up to 100 times; `nil` when every try met that.
    func readRetryingPagesMoved<R>(_ body: (Snapshot) throws -> R) throws -> R? {
        for _ in 0..<100 {
            do {
                return try read(body)
            } catch is PagesMoved {
                continue
            }
        }
        return nil
    }
}
