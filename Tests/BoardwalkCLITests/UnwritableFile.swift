import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Makes the existing file at `path` unwritable for this process, so that `access(path, W_OK)` fails; `nil` when
/// this process cannot.
///
/// Mode 0444 is enough for other users; root passes any permission check, so for root the file is made immutable
/// (`chattr +i`, which needs `CAP_LINUX_IMMUTABLE` and a file system that has the flag, as ext4 and tmpfs do).
/// - Returns: what undoes it (an immutable file cannot be removed with its temporary directory), or `nil`.
func makeUnwritable(_ path: String) -> (() -> Void)? {
    if geteuid() != 0 {
        guard (try? FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)) != nil else {
            return nil
        }
        return {}
    }
    // <linux/fs.h>: FS_IOC_GETFLAGS is _IOR('f', 1, long), FS_IOC_SETFLAGS _IOW('f', 2, long) (the kernel reads an
    // int through either), FS_IMMUTABLE_FL 0x10. Function-like macros, so not imported into Swift.
    let getFlags: UInt = 0x8008_6601, setFlags: UInt = 0x4008_6602, immutable: Int32 = 0x10
    func set(_ on: Bool) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var flags: Int32 = 0
        guard ioctl(fd, getFlags, &flags) == 0 else { return false }
        flags = on ? flags | immutable : flags & ~immutable
        return ioctl(fd, setFlags, &flags) == 0
    }
    guard set(true) else { return nil }
    guard access(path, W_OK) != 0 else {
        _ = set(false)
        return nil
    }
    return { _ = set(false) }
}

/// Whether ``makeUnwritable(_:)`` works here (tried on a file of a temporary directory).
func canMakeUnwritableFiles() -> Bool {
    guard let directory = try? temporaryDirectory() else { return false }
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("probe").path
    guard FileManager.default.createFile(atPath: file, contents: Data()), let undo = makeUnwritable(file) else {
        return false
    }
    undo()
    return true
}
