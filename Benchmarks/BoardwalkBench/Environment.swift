// Process and machine facts the report needs: peak RSS, sizes on disk, temporary directories.
import Foundation

enum ProcessInfoReader {
    /// The peak resident set size of this process in bytes (`VmHWM` in /proc/self/status), or nil.
    static func peakRSS() -> Int? { statusField("VmHWM:") }

    /// The current resident set size in bytes (`VmRSS`), or nil.
    static func currentRSS() -> Int? { statusField("VmRSS:") }

    /// The current anonymous resident memory in bytes (`RssAnon`: heap and stacks, not mapped files), or nil.
    static func anonymousRSS() -> Int? { statusField("RssAnon:") }

    private static func statusField(_ prefix: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            // "VmHWM:     12345 kB"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kb = Int(fields[1]) { return kb * 1024 }
        }
        return nil
    }

    /// A one-line description of the machine for the report header.
    static func machine() -> String {
        var model = "unknown CPU"
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            model = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        return
            "\(ProcessInfo.processInfo.activeProcessorCount) CPUs, \(model), \(String(format: "%.0f", memory)) GiB RAM"
    }
}

/// Bytes of every regular file under a directory (or of the file itself), as allocated on disk would
/// differ for sparse files, so this is the logical size; LMDB's data file is not sparse once written.
func diskBytes(_ path: String) -> Int {
    let fm = FileManager.default
    var isDirectory: ObjCBool = false
    guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
    if !isDirectory.boolValue {
        return (try? fm.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
    var total = 0
    for case let name as String in fm.enumerator(atPath: path) ?? FileManager.DirectoryEnumerator() {
        let full = path + "/" + name
        if let attrs = try? fm.attributesOfItem(atPath: full), attrs[.type] as? FileAttributeType == .typeRegular {
            total += (attrs[.size] as? Int) ?? 0
        }
    }
    return total
}

/// Bytes actually allocated on disk (st_blocks × 512) under a directory: what `du` reports.
func allocatedDiskBytes(_ path: String) -> Int {
    let fm = FileManager.default
    var total = 0
    func add(_ p: String) {
        var st = stat()
        if stat(p, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { total += Int(st.st_blocks) * 512 }
    }
    var isDirectory: ObjCBool = false
    guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
    if !isDirectory.boolValue { add(path); return total }
    for case let name as String in fm.enumerator(atPath: path) ?? FileManager.DirectoryEnumerator() {
        add(path + "/" + name)
    }
    return total
}

/// Where scratch directories go: `$BOARDWALK_BENCH_TMP`, else /tmp/boardwalk-bench.
let scratchRoot = ProcessInfo.processInfo.environment["BOARDWALK_BENCH_TMP"] ?? "/tmp/boardwalk-bench"

/// A fresh scratch directory under ``scratchRoot``, named after this process so runs never share one.
func scratchDirectory(_ name: String) throws -> String {
    let path = "\(scratchRoot)/\(getpid())-\(name)"
    let fm = FileManager.default
    try? fm.removeItem(atPath: path)
    try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func removeScratch(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Removes every scratch directory this process made (what a failed run or a shared input left behind).
func removeAllScratch() {
    let prefix = "\(getpid())-"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: scratchRoot)) ?? [] where name.hasPrefix(prefix) {
        removeScratch(scratchRoot + "/" + name)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
