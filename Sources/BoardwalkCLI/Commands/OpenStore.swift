import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the store at `path` for a command, turning store errors into runtime errors that say which store.
func openStore(_ path: String, readOnly: Bool = false, create: Bool = true, notes: Invocation? = nil) throws -> Store {
    if !create || readOnly {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw RuntimeError("no store at '\(path)' (use --db DIR or $BOARDWALK_DB, or ingest something first)")
        }
    }
    let store: Store
    do {
        store = try Store.open(at: path, options: Store.Options(readOnly: readOnly, create: create))
    } catch let error as StoreError where error.kind == .corrupt {
        // Nothing but the salvage reads a store that does not open.
        throw RuntimeError(
            "cannot open the store '\(path)': \(error). `boardwalk export --salvage` saves every event that can be "
                + "read, for a new store")
    } catch {
        throw RuntimeError("cannot open the store '\(path)': \(error)")
    }
    if store.isWithoutLockFile {
        notes?.err(
            "note: '\(path)/lock.mdb' is not writable here, so the store is read without it: a process that "
                + "starts appending to it meanwhile can make this fail or give wrong results\n")
    }
    return store
}
