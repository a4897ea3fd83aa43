import BoardwalkStoreFormat

extension Snapshot {
    /// Checks that `block_heads` holds, for every block of `events` and nothing else, the block's head: its bytes up
    /// to its first event, byte for byte. Reports at most ten differences, then their number.
    /// - Complexity: O(blocks): the two trees are walked side by side, in key order; each block's header is read.
    func checkBlockHeads(_ report: inout CheckReport) throws {
        var problems = 0
        func add(_ problem: String) {
            problems += 1
            if problems <= 10 { report.add("block_heads: " + problem) }
        }
        try txn.withCursor(dbs.events) { events in
            try txn.withCursor(dbs.blockHeads) { heads in
                var block = try events.first(), head = try heads.first()
                while block || head {
                    let blockFirst = !head || (block && events.key.lexicographicallyPrecedes(heads.key))
                    let headFirst = !blockFirst && (!block || heads.key.lexicographicallyPrecedes(events.key))
                    if blockFirst {
                        add("no head for the block of events under \(describe(events.key))")
                        block = try events.next()
                        continue
                    }
                    if headFirst {
                        add("a head under \(describe(heads.key)), where events holds no block")
                        head = try heads.next()
                        continue
                    }
                    // A block that does not decode is reported by the check of `events`.
                    if let key = EventKey(events.key), let header = try? blockHeader(key, events.value),
                        !heads.value.elementsEqual(events.value[..<header.eventsStart])
                    {
                        add(
                            "the head under \(describe(heads.key)) is not its block's first \(header.eventsStart) bytes"
                        )
                    }
                    block = try events.next()
                    head = try heads.next()
                }
            }
        }
        if problems > 10 { report.add("block_heads: \(problems) differences from events in all") }
    }

    /// A key of `events` as `seq S (onboarding O, screen N)`, or its length when it is not one.
    private func describe(_ key: UnsafeRawBufferPointer) -> String {
        guard let key = EventKey(key) else { return "a key of \(key.count) bytes" }
        return "seq \(key.seq) (\(StoreError.group(key.onboarding, key.screen)))"
    }
}
