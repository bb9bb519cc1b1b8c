extension WireError.Code {
    /// The store file was replaced, moved or deleted, or its `-wal` file deleted, while the
    /// daemon had it open: writes are refused until it restarts; reads are answered from the
    /// file it opened. The message names the copy of the data it wrote (`protocol/README.md`).
    public static let storeReplaced = WireError.Code(rawValue: "store_replaced")
}
