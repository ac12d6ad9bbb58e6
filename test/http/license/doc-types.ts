// Types of the modules extracted from docs/integration.md (they are written at test time).
export interface DocClaims {
  lid: string;
  pid: string;
  idn: string;
  fpr: string;
  ftr: Record<string, boolean | string>;
  exp: number;
  kid: string;
}
type VerifyOpts = { trustedKeys: Record<string, string>; identifier: string; productId: string; nowSeconds?: number };
export declare const verifyModule: {
  fingerprint(identifier: string, productId: string): Promise<string>;
  verifyLicenseToken(token: string, opts: VerifyOpts): Promise<DocClaims | null>;
};
export declare const clientModule: {
  checkLicense(
    cfg: { baseUrl: string; licenseKey: string; identifier: string; productId: string; trustedKeys: Record<string, string> },
    store: { load(): string | null; save(token: string): void; clear(): void },
  ): Promise<DocClaims | null>;
};
export declare const pemModule: {
  signatureValidNode(token: string, pem: string): boolean;
  signatureValidWebCrypto(token: string, pem: string): Promise<boolean>;
};
