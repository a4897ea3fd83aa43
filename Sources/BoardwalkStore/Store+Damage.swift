#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The damage mark: a store that a read or ``Store/check()`` found damaged refuses appends until a check passes.
///
/// LMDB writes new pages beside the old ones and never reads a page it does not need, so an append into a damaged
/// tree commits; but the next read of that tree may abort inside liblmdb, and a block grown over damage would carry
/// it on under a new checksum. So the first damage any read meets (``StoreError/Kind/corrupt``) is written down in
/// a file `damaged` beside `data.mdb`, which every process that opens the store sees, and appends refuse a store
/// that has it. A passing ``Store/check()`` removes it (the damage is gone, or was never in the file: a read of a
/// store being replaced underneath); ``Snapshot/salvageEvents(_:damaged:)`` reads the events into a new store.
extension Store {
    /// The file that marks the store damaged.
    var damageMarkPath: String { path + "/damaged" }

    /// What the damage mark says (the first damage found, and when), or `nil` when the store is not marked.
    ///
    /// ``write(_:)`` and ``append(_:checkpoint:)`` refuse a marked store; a passing ``check()`` removes the mark.
    /// - Complexity: one `open` of a small file.
    public var damageFound: String? {
        let descriptor = Glibc.open(damageMarkPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        let text = String(decoding: bytes.prefix(max(n, 0)), as: UTF8.self)
        return text.isEmpty ? "damage" : text.trimmingSuffixNewlines()
    }

    /// Marks the store damaged with `error`, unless it is marked already (the first damage found stays). A store
    /// whose directory cannot be written is left unmarked: it cannot be appended to either.
    func markDamaged(_ error: StoreError) {
        let descriptor = Glibc.open(damageMarkPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        let text = "\(error)\n"
        _ = text.utf8CString.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count - 1) }
        fsync(descriptor)
    }

    /// Removes the damage mark, after a check that found nothing wrong.
    func clearDamageMark() {
        unlink(damageMarkPath)
    }

    /// Throws when the store is marked damaged: what an append checks before it begins.
    func checkNotMarkedDamaged() throws {
        guard let found = damageFound else { return }
        throw StoreError(
            .corrupt,
            "\(path) is marked damaged, so appends are refused (they would write into the damage): \(found). "
                + "Run `boardwalk check` on it: when the check passes, the mark is removed; otherwise "
                + "`boardwalk export --salvage` saves every event that can be read, for a new store")
    }
}

extension String {
    fileprivate func trimmingSuffixNewlines() -> String {
        var s = Substring(self)
        while s.last == "\n" { s = s.dropLast() }
        return String(s)
    }
}
