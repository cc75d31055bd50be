package reference

// WithStoreConfig is withStoreConfig, for the tests of package reference_test.
var WithStoreConfig = withStoreConfig
