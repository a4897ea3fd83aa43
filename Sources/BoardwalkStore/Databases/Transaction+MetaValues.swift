import BoardwalkCodec
import BoardwalkModel
internal import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Transaction {
    func getUInt64(_ db: Database, _ key: String) throws -> UInt64? {
        try key.withUTF8Bytes { k in
            guard let v = try get(db, k) else { return nil }
            guard v.count == 8 else { throw StoreError(.corrupt, "\(db.name)/\(key) is \(v.count) bytes, not 8") }
            return v.be64(0)
        }
    }

    func getUInt32(_ db: Database, _ key: String) throws -> UInt32? {
        try key.withUTF8Bytes { k in
            guard let v = try get(db, k) else { return nil }
            guard v.count == 4 else { throw StoreError(.corrupt, "\(db.name)/\(key) is \(v.count) bytes, not 4") }
            return v.be32(0)
        }
    }

    func putUInt64(_ db: Database, _ key: String, _ value: UInt64) throws {
        var be = value.bigEndian
        try key.withUTF8Bytes { k in try withUnsafeBytes(of: &be) { v in try put(db, k, v) } }
    }

    func putUInt32(_ db: Database, _ key: String, _ value: UInt32) throws {
        var be = value.bigEndian
        try key.withUTF8Bytes { k in try withUnsafeBytes(of: &be) { v in try put(db, k, v) } }
    }
}

extension Layout {
    /// The format of the store whose `meta` database is `meta`. Stores of format 12 on seal the value (as every
    /// `meta` value); older ones stored the bare 4 bytes, read here as they are, so that an older store is told
    /// apart from a damaged one.
    /// - Throws: ``StoreError/Kind/notAStore`` without a format; ``StoreError/Kind/corrupt`` for a damaged one.
    static func storedFormat(_ txn: Transaction, _ meta: Database, path: String) throws -> UInt32 {
        let bare = Database(dbi: meta.dbi, name: meta.name)
        return try metaFormat.withUTF8Bytes { key in
            guard let stored = try txn.get(bare, key) else {
                throw StoreError(.notAStore, "\(path) has no format version in its meta database")
            }
            if stored.count == 4 { return stored.be32(0) }
            let value = try SealedValue.open(stored, key: key, meta)
            guard value.count == 4 else {
                throw StoreError(.corrupt, "\(meta.name)/\(metaFormat) is \(value.count) bytes, not 4")
            }
            return value.be32(0)
        }
    }
}
