import BoardwalkCodec

extension Snapshot {
    /// `check()`: `session_names` holds exactly an entry for each session's own id (`sessions`) and for each
    /// (profile, session) pair of the events (`profilePairs`: profile << 32 | session), each under its name's hash,
    /// in runs that are sorted, whole, undamaged and as the directory lists them (two runs may repeat an entry).
    func checkSessionNames(_ report: inout CheckReport, sessions: Set<UInt32>, profilePairs: Set<UInt64>) throws {
        var expected: [SessionNames.Entry: Bool] = [:]
        func expect(_ role: SessionNames.Role, name: UInt32, session: UInt32) {
            guard let string = string(for: name) else { return }  // checkStrings reports a missing string
            let entry = SessionNames.Entry(
                hash: SessionNames.hash(string), role: role.rawValue, session: session, name: name)
            expected[entry] = false
        }
        for session in sessions { expect(.session, name: session, session: session) }
        for pair in profilePairs {
            expect(.profile, name: UInt32(truncatingIfNeeded: pair >> 32), session: UInt32(truncatingIfNeeded: pair))
        }
        var problems = 0
        func add(_ problem: String) {
            problems += 1
            if problems <= 10 {
                report.add(problem.hasPrefix("session_names:") ? problem : "session_names: " + problem)
            }
        }
        var directory = SessionNames.Directory()
        var counted: [UInt64: Int] = [:]
        var previous: (run: UInt64, entry: SessionNames.Entry)? = nil
        try txn.withCursor(dbs.sessionNames) { c in
            var found = try c.first()
            if found, c.key.elementsEqual(SessionNames.directoryKey) {
                do { directory = try SessionNames.Directory(decoding: c.value) } catch let error as StoreError {
                    add(error.message)
                }
                found = try c.next()
            }
            while found {
                let entries: UnsafeRawBufferPointer
                do {
                    entries = try SessionNames.chunkEntries(key: c.key, value: c.value)
                } catch let error as StoreError {
                    add(error.message)
                    found = try c.next()
                    continue
                }
                let run = c.key.be64(0)
                for offset in stride(from: 0, to: entries.count, by: SessionNames.entrySize) {
                    let entry = SessionNames.Entry(entries, at: offset)
                    if let previous, previous.run == run, !(previous.entry < entry) {
                        add("run \(run) is not in order")
                    }
                    previous = (run, entry)
                    counted[run, default: 0] += 1
                    if expected[entry] == nil {
                        let what = entry.role == SessionNames.Role.session.rawValue ? "own id" : "profile"
                        add(
                            "an entry lists session \(entry.session) under string \(entry.name) as its \(what), "
                                + "which its events do not say")
                    } else {
                        expected[entry] = true
                    }
                }
                found = try c.next()
            }
        }
        for run in directory.runs where counted[run.id] != Int(run.count) {
            add("run \(run.id) holds \(counted[run.id] ?? 0) entries; the directory says \(run.count)")
        }
        let listed = Set(directory.runs.map(\.id))
        for run in counted.keys.sorted() where !listed.contains(run) {
            add("run \(run) is not in the directory")
        }
        if let newest = directory.runs.map(\.id).max(), newest >= directory.nextRun {
            add("the directory's next run id \(directory.nextRun) is not after run \(newest)")
        }
        let missing = expected.values.count { !$0 }
        if missing > 0 { add("\(missing) sessions or (profile, session) pairs of the events have no entry") }
        if problems > 10 { report.add("session_names: \(problems) problems in all") }
    }
}
