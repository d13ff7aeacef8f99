/**
 * A TLS Redis for tests, with a certificate authority and a server certificate made by the test run
 * itself, with Node's crypto: no `openssl` binary, no files to keep.
 */
import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type RedisProcess, startRedisProcess } from './redis-server.js';

/** PEM text: the CA's certificate (what clients trust), and the server's certificate and key. */
export interface TestCertificates {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** A TLS-only Redis we started (`url` is `rediss://`), and the CA that signed its certificate. */
export interface TlsRedisProcess extends RedisProcess {
  readonly ca: string;
}

/**
 * Starts `redis-server` listening on a loopback TLS port only (no plain port), without asking clients
 * for certificates. Resolves to a reason instead when this `redis-server` was built without TLS.
 */
export async function startTlsRedisServer(): Promise<TlsRedisProcess | { unavailable: string }> {
  const certificates = makeCertificates();
  try {
    const server = await startRedisProcess(async (port, dir) => {
      const [ca, cert, key] = ['ca.crt', 'server.crt', 'server.key'].map((name) => join(dir, name));
      await writeFile(ca as string, certificates.ca);
      await writeFile(cert as string, certificates.cert);
      await writeFile(key as string, certificates.key, { mode: 0o600 });
      return [
        ...['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--dir', dir],
        ...['--tls-cert-file', cert as string, '--tls-key-file', key as string],
        ...[
          '--tls-ca-cert-file',
          ca as string,
          '--tls-auth-clients',
          'no',
          '--save',
          '',
          '--appendonly',
          'no',
        ],
      ];
    }, 'Ready to accept connections');
    return { ...server, url: `rediss://${server.host}:${server.port}`, ca: certificates.ca };
  } catch (error) {
    // A build without TLS knows no tls-* directive: it stops at the first, naming it (">>> 'tls-port 1'"
    // then "Bad directive…"). A build with TLS as a module that is not loaded says TLS is not supported.
    const message = String(error);
    if (/>>> 'tls-[^\n]*\n\s*Bad directive|TLS[^\n]*not supported/i.test(message)) {
      return {
        unavailable: `redis-server was built without TLS (${message.split('\n').slice(-3).join(' ')})`,
      };
    }
    throw error;
  }
}

/**
 * A CA and a server certificate it signed, for 127.0.0.1 and localhost, valid from an hour ago for a
 * day. Elliptic-curve keys (P-256, ECDSA with SHA-256): made in a millisecond.
 */
export function makeCertificates(): TestCertificates {
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const server = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caName = name('Tollgate test CA');
  const caCert = certificate(caName, caName, ca.publicKey, ca.privateKey, [
    extension('2.5.29.19', true, seq(der(0x01, Buffer.from([0xff])))), // basicConstraints: CA
  ]);
  const subjectAltName = seq(der(0x87, Buffer.from([127, 0, 0, 1])), der(0x82, Buffer.from('localhost')));
  const serverCert = certificate(name('127.0.0.1'), caName, server.publicKey, ca.privateKey, [
    extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
    extension('2.5.29.17', false, subjectAltName),
  ]);
  return {
    ca: pem('CERTIFICATE', caCert),
    cert: pem('CERTIFICATE', serverCert),
    key: server.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** An X.509 v3 certificate (RFC 5280 §4.1) of `subject`'s `publicKey`, signed by `issuer`'s `signingKey`. */
function certificate(
  subject: Buffer,
  issuer: Buffer,
  publicKey: KeyObject,
  signingKey: KeyObject,
  extensions: Buffer[],
): Buffer {
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const hourMs = 3_600_000;
  const serial = randomBytes(16);
  // A positive INTEGER in its shortest form (DER): a first byte of 0 would be padding OpenSSL refuses.
  serial[0] = 1 + ((serial[0] as number) % 0x7f);
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))), // version: v3
    der(0x02, serial),
    ecdsaWithSha256,
    issuer,
    seq(utcTime(Date.now() - hourMs), utcTime(Date.now() + 24 * hourMs)),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, signingKey); // DER-encoded ECDSA-Sig-Value
  return seq(tbs, ecdsaWithSha256, der(0x03, Buffer.from([0]), signature));
}

/** A Name of one common name. */
function name(commonName: string): Buffer {
  return seq(der(0x31, seq(oid('2.5.4.3'), der(0x0c, Buffer.from(commonName)))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), der(0x04, value));
}

/** A DER element: its tag, its length (short or long form), its contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length = body.length;
  const header =
    length < 0x80
      ? [tag, length]
      : length < 0x100
        ? [tag, 0x81, length]
        : [tag, 0x82, length >> 8, length & 0xff];
  return Buffer.concat([Buffer.from(header), body]);
}

function seq(...contents: Buffer[]): Buffer {
  return der(0x30, ...contents);
}

/** An OBJECT IDENTIFIER: the first two arcs in one byte, then each arc in base 128. */
function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const digits = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) digits.unshift((value & 0x7f) | 0x80);
    bytes.push(...digits);
  }
  return der(0x06, Buffer.from(bytes));
}

/** A UTCTime, `YYMMDDHHMMSSZ` (the form for years before 2050). */
function utcTime(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2026-01-02T03:04:05.678Z
  const digits = iso.slice(2, 19).replace(/[-T:]/g, '');
  return der(0x17, Buffer.from(`${digits}Z`));
}

function pem(label: string, body: Buffer): string {
  const lines = body.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
