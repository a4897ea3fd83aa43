import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Synchronization

/// The reader side's string → id table, shared by every snapshot of a ``Store``: a copy of `strings`
/// loaded incrementally (ids are dense from 0 and never change once committed).
///
/// Only read transactions load it: a write transaction sees strings that an abort would take back.
/// Ids above what is loaded (a write transaction's own new strings) are found by comparing chunk entries.
final class SharedStringTable: Sendable {
    /// What the lock guards: the table, the damage found loading it, and the id → string lookups answered by
    /// walking a chunk since the table was last loaded.
    private struct State {
        var table = StringTable()
        var damaged: String? = nil
        var walks = 0

        /// Reads strings `table.count..<limit`. Damage (ids not dense, a chunk that does not decode, a repeated
        /// string) is remembered in `damaged` and reported by every later lookup.
        mutating func load(_ txn: Transaction, _ dbs: Databases, _ limit: UInt32) throws {
            do {
                try StringChunks.forEach(in: txn, dbs, from: UInt32(table.count)) { id, entry in
                    guard id < limit else { return false }
                    guard table.insert(entry.string).inserted else {
                        damaged = "string id \(id) repeats an earlier string"
                        return false
                    }
                    return true
                }
            } catch let error as StoreError where error.kind == .corrupt {
                damaged = error.description
            }
        }
    }

    private let state = Mutex(State())

    /// The string with id `id` (below `limit`, the snapshot's string count) from the table, loading the table
    /// first once walks of chunks have cost about as much as loading it would (one walk per 16 strings to load);
    /// `nil` when the caller should walk the chunk itself: a write transaction, a damaged table, or few lookups so
    /// far (an export of a few events from a large store should not read every string).
    func string(for id: StringID, txn: Transaction, dbs: Databases, limit: UInt32) -> String? {
        state.withLock { s in
            if Int(id) < s.table.count { return s.table.string(for: id) }
            guard !txn.isWrite, s.damaged == nil else { return nil }
            s.walks += 1
            guard s.walks >= max(64, (Int(limit) - s.table.count) / 16) else { return nil }
            try? s.load(txn, dbs, limit)
            s.walks = 0
            return Int(id) < s.table.count ? s.table.string(for: id) : nil
        }
    }

    /// The strings of `ids` (ascending) when the table holds every one of them, without loading it; else nil.
    func loadedStrings(for ids: [StringID]) -> [String]? {
        state.withLock { s in
            guard let last = ids.last, Int(last) < s.table.count else { return ids.isEmpty ? [] : nil }
            var strings: [String] = []
            strings.reserveCapacity(ids.count)
            for id in ids {
                guard let string = s.table.string(for: id) else { return nil }
                strings.append(string)
            }
            return strings
        }
    }

    func id(of string: String, txn: Transaction, dbs: Databases, limit: UInt32) throws -> StringID? {
        let loaded: Int = try state.withLock { s in
            if !txn.isWrite && s.table.count < Int(limit) && s.damaged == nil { try s.load(txn, dbs, limit) }
            if let damaged = s.damaged { throw StoreError(.corrupt, damaged) }
            return s.table.count
        }
        if let id = state.withLock({ $0.table.id(of: string) }) { return id < limit ? id : nil }
        guard loaded < Int(limit) else { return nil }
        var found: StringID? = nil
        try string.withUTF8Bytes { bytes in
            try StringChunks.forEach(in: txn, dbs, from: UInt32(loaded)) { id, entry in
                guard id < limit else { return false }
                if entry.matches(bytes) { found = id }
                return found == nil
            }
        }
        return found
    }

    /// The ids of `strings` below `limit` (`nil` for those not stored), without loading the table: from it for what
    /// it holds, then in one walk of the chunks past it, each entry compared with the strings still missing.
    func ids(of strings: [String], txn: Transaction, dbs: Databases, limit: UInt32) throws -> [StringID?] {
        let (known, loaded): ([StringID?], Int) = try state.withLock { s in
            if let damaged = s.damaged { throw StoreError(.corrupt, damaged) }
            return (strings.map { s.table.id(of: $0).flatMap { $0 < limit ? $0 : nil } }, s.table.count)
        }
        var found = known
        var missing = found.indices.filter { found[$0] == nil }
        guard !missing.isEmpty, loaded < Int(limit) else { return found }
        let bytes = strings.map { Array($0.utf8) }
        try StringChunks.forEach(in: txn, dbs, from: UInt32(loaded)) { id, entry in
            guard id < limit else { return false }
            for (k, i) in missing.enumerated() where bytes[i].withUnsafeBytes({ entry.matches($0) }) {
                found[i] = id
                missing.remove(at: k)
                break
            }
            return !missing.isEmpty
        }
        return found
    }
}
