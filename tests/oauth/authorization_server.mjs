// An OAuth 2.1 authorization server for tests: oidc-provider (pinned in package.json) on
// 127.0.0.1 with an OS-chosen port, plain http, every state in memory.
//
//   node authorization_server.mjs [--access-ttl S] [--refresh-ttl S]
//        [--client-id ID --client-secret SECRET] [--scope SCOPE ...]
//        [--cimd] [--response-iss ISSUER]
//
// Once listening it prints one JSON line on stdout: {"issuer", "port", "client_id",
// "client_secret", "scopes", "access_ttl"}; it exits 0 on SIGTERM or SIGINT.
//
// - open dynamic client registration (no initial access token); registered clients default to
//   application_type "native", so a loopback redirect URI matches on any port (RFC 8252);
// - authorization code with PKCE (S256) required for every client; the dev login and consent
//   pages (devInteractions) accept any login and password;
// - a refresh token for every client allowed the refresh_token grant (no offline_access needed),
//   rotated on every use: the used one is consumed, and presenting it again is invalid_grant
//   AND revokes the whole grant (reuse detection), so the token that replaced it dies too;
// - the authorization response always carries `iss` (RFC 9207, advertised in the metadata);
//   with --response-iss it carries that one instead of its own (a mix-up, for tests);
// - with --cimd, Client ID Metadata Documents (oidc-provider's experimental feature, draft 02,
//   advertised as client_id_metadata_document_supported): an https client_id is fetched as the
//   client's metadata. Its fetch is let reach 127.0.0.1 (oidc-provider refuses special-use
//   addresses), and trusts the test's own CA given in NODE_EXTRA_CA_CERTS;
// - client_credentials for the pre-registered confidential client (--client-id/--client-secret);
// - revocation (RFC 7009) and introspection (RFC 7662), authenticated as the token's client;
// - resource indicators (RFC 8707): any http(s) resource gets a JWT access token (RS256) whose
//   `aud` is that resource, with the --scope scopes, verifiable with the keys at /jwks;
//   a refresh naming no resource gets the resource granted at authorization; a
//   client_credentials request naming none gets an opaque token no resource server accepts.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

const { values } = parseArgs({
  options: {
    'access-ttl': { type: 'string', default: process.env.OAUTH_AS_ACCESS_TTL ?? '300' },
    'refresh-ttl': { type: 'string', default: process.env.OAUTH_AS_REFRESH_TTL ?? '86400' },
    'client-id': { type: 'string', default: process.env.OAUTH_AS_CLIENT_ID ?? 'machine' },
    'client-secret': {
      type: 'string',
      default: process.env.OAUTH_AS_CLIENT_SECRET ?? randomBytes(24).toString('base64url'),
    },
    scope: { type: 'string', multiple: true, default: ['mcp'] },
    cimd: { type: 'boolean', default: false },
    'response-iss': { type: 'string' },
  },
});

const accessTtl = Number(values['access-ttl']);
const refreshTtl = Number(values['refresh-ttl']);
if (!(Number.isInteger(accessTtl) && accessTtl > 0 && Number.isInteger(refreshTtl) && refreshTtl > 0)) {
  process.stderr.write('authorization_server: --access-ttl and --refresh-ttl take whole seconds > 0\n');
  process.exit(2);
}
const scopes = values.scope;

const server = createServer();
await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  .export({ format: 'jwk' });

function isResourceUrl(indicator) {
  try {
    const { protocol } = new URL(indicator);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

const provider = new Provider(issuer, {
  clients: [{
    client_id: values['client-id'],
    client_secret: values['client-secret'],
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: scopes.join(' '),
  }],
  clientDefaults: {
    application_type: 'native',
    grant_types: ['authorization_code', 'refresh_token'],
    id_token_signed_response_alg: 'RS256',
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
  scopes: ['openid', 'offline_access', ...scopes],
  features: {
    devInteractions: { enabled: true },
    clientIdMetadataDocument: { enabled: values.cimd, ack: 'draft-02' },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo(_ctx, indicator) {
        if (!isResourceUrl(indicator)) {
          throw new Provider.errors.InvalidTarget('resource must be an http(s) URL');
        }
        return {
          scope: scopes.join(' '),
          audience: indicator,
          accessTokenTTL: accessTtl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // Only a client id metadata document is fetched; the test's document is on 127.0.0.1.
  fetch: (url, options) => globalThis.fetch(url, { ...options, dispatcher: undefined }),
  pkce: { required: () => true },
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  ttl: {
    AccessToken: accessTtl,
    ClientCredentials: accessTtl,
    RefreshToken: refreshTtl,
    AuthorizationCode: 60,
    Grant: refreshTtl,
    IdToken: accessTtl,
    Interaction: 600,
    Session: refreshTtl,
  },
  renderError(ctx, out) {
    ctx.type = 'json';
    ctx.body = out;
  },
});

// Errors the provider answers to clients are also events; print them for the test's log.
for (const event of ['server_error', 'grant.error', 'authorization.error', 'registration_create.error']) {
  provider.on(event, (_ctx, error) => {
    process.stderr.write(`authorization_server: ${event}: ${error.message} ${error.error_description ?? ''}\n`);
  });
}

// Each dynamic registration, so a test can tell whether the client registered itself.
provider.on('registration_create.success', (_ctx, client) => {
  process.stderr.write(`authorization_server: registered ${client.clientId}\n`);
});

const callback = provider.callback();
const responseIss = values['response-iss'];
server.on('request', (req, res) => {
  if (responseIss !== undefined) {
    // The redirect back to the client: swap the `iss` it carries for --response-iss.
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name, value) => {
      if (name.toLowerCase() === 'location' && typeof value === 'string' && value.includes('iss=')) {
        const url = new URL(value);
        url.searchParams.set('iss', responseIss);
        return setHeader(name, url.href);
      }
      return setHeader(name, value);
    };
  }
  callback(req, res);
});

function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

process.stdout.write(`${JSON.stringify({
  issuer,
  port,
  client_id: values['client-id'],
  client_secret: values['client-secret'],
  scopes,
  access_ttl: accessTtl,
})}\n`);
