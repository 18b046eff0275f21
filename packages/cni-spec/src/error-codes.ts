/**
 * The well-known CNI error codes. Codes 0–99 are reserved by the specification; 999 is the Go library's
 * "internal error", which Debian's reference plugins use for most failures. Plugin-specific codes start at 100.
 */
export const CniErrorCode = {
  /** 1: the request's CNI version is not supported (spec 0.2.0). */
  IncompatibleVersion: 1,
  /** 2: a configuration field is not supported; the message names the key and value (0.2.0). */
  UnsupportedField: 2,
  /** 3: the container is unknown or does not exist; the runtime need not clean up (0.4.0). */
  UnknownContainer: 3,
  /** 4: required environment variables are missing or invalid; the message names them (1.0.0). */
  InvalidEnvironment: 4,
  /** 5: an I/O failure, such as reading stdin (1.0.0). */
  IoFailure: 5,
  /** 6: the configuration or version information could not be decoded (1.0.0). */
  DecodeFailure: 6,
  /** 7: the network configuration failed validation (1.0.0). */
  InvalidNetworkConfig: 7,
  /** 11: a transient condition; the runtime should retry later (0.4.0). */
  TryAgainLater: 11,
  /** 50: STATUS: the plugin cannot serve ADD requests now (1.1.0). */
  PluginNotAvailable: 50,
  /** 51: STATUS: not available, and existing containers may have limited connectivity (1.1.0). */
  PluginNotAvailableLimitedConnectivity: 51,
  /** 999: an internal error (Go library convention, not in the specification). */
  Internal: 999,
} as const;

/** One of the well-known codes in {@link CniErrorCode}. */
export type WellKnownCniErrorCode = (typeof CniErrorCode)[keyof typeof CniErrorCode];
