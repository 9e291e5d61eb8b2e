/**
 * Certificates for the HTTPS sandbox: a CA made for the run, a server certificate it signs
 * for 127.0.0.1, ::1 and localhost, and (for mutual TLS rehearsals) a client certificate.
 * Node 20 can make keys but not X.509 certificates, so node-forge builds them; the keys come
 * from node:crypto (RSA-2048, off the main thread), as forge's own key generation is slow.
 */
import { generateKeyPair, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import type * as Forge from 'node-forge';

// node-forge is CommonJS with no named exports Node can see; its types describe the module object.
const forge = createRequire(import.meta.url)('node-forge') as typeof Forge;

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

export interface SandboxCertificates {
  /** The run's CA: what a client must trust (NODE_EXTRA_CA_CERTS, --ca-file). */
  ca: IssuedCertificate;
  server: IssuedCertificate;
  /** Only when client certificates are required. */
  client: IssuedCertificate | undefined;
}

const generateKeyPairAsync = promisify(generateKeyPair);
/** A day back (a clock a little off still works) and 90 days ahead (no expiry warning from check). */
const DAY_MS = 24 * 3600 * 1000;

async function rsaKeys(): Promise<{ keyPem: string; forgeKeys: { privateKey: Forge.pki.rsa.PrivateKey; publicKey: Forge.pki.rsa.PublicKey } }> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return {
    keyPem: privateKey,
    forgeKeys: {
      privateKey: forge.pki.privateKeyFromPem(privateKey) as Forge.pki.rsa.PrivateKey,
      publicKey: forge.pki.publicKeyFromPem(publicKey) as Forge.pki.rsa.PublicKey,
    },
  };
}

function newCertificate(publicKey: Forge.pki.rsa.PublicKey, subject: string, now: number): Forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive 16-byte serial (leading 0x01..0x7f), unique per run.
  cert.serialNumber = `${(1 + (randomBytes(1)[0]! % 0x7f)).toString(16).padStart(2, '0')}${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(now - DAY_MS);
  cert.validity.notAfter = new Date(now + 90 * DAY_MS);
  cert.setSubject([{ name: 'commonName', value: subject }, { name: 'organizationName', value: 'ccs-bulk sandbox' }]);
  return cert;
}

export async function makeSandboxCertificates(options: { clientCertificate: boolean }): Promise<SandboxCertificates> {
  const now = Date.now();
  const [caKeys, serverKeys, clientKeys] = await Promise.all([
    rsaKeys(),
    rsaKeys(),
    options.clientCertificate ? rsaKeys() : undefined,
  ]);
  const ca = newCertificate(caKeys.forgeKeys.publicKey, `ccs-bulk sandbox CA ${randomBytes(4).toString('hex')}`, now);
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.forgeKeys.privateKey, forge.md.sha256.create());
  const authorityKeyIdentifier = { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() };

  const server = newCertificate(serverKeys.forgeKeys.publicKey, 'localhost', now);
  server.setIssuer(ca.subject.attributes);
  server.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // type 2 = DNS name, 7 = IP address
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    authorityKeyIdentifier,
  ]);
  server.sign(caKeys.forgeKeys.privateKey, forge.md.sha256.create());

  let client: IssuedCertificate | undefined;
  if (clientKeys) {
    const cert = newCertificate(clientKeys.forgeKeys.publicKey, 'ccs-bulk sandbox client', now);
    cert.setIssuer(ca.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
      authorityKeyIdentifier,
    ]);
    cert.sign(caKeys.forgeKeys.privateKey, forge.md.sha256.create());
    client = { certPem: forge.pki.certificateToPem(cert), keyPem: clientKeys.keyPem };
  }
  return {
    ca: { certPem: forge.pki.certificateToPem(ca), keyPem: caKeys.keyPem },
    server: { certPem: forge.pki.certificateToPem(server), keyPem: serverKeys.keyPem },
    client,
  };
}
