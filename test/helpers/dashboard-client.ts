/**
 * The dashboard over real HTTP without a browser (for tests of a running `kosh serve`): keeps the
 * session cookie, reads the CSRF token from each page, and never follows redirects by itself.
 */
export class DashboardClient {
  private cookie = '';
  private csrf = '';

  private constructor(readonly base: string) {}

  /** Logs in through the login form; `status` is the login's answer (303 when it worked). */
  static async login(base: string, login: { email: string; password: string }) {
    const client = new DashboardClient(base);
    const form = await client.get('/dashboard/login/');
    const response = await client.post('/dashboard/login/', { email: login.email, password: login.password });
    return { client, status: response.status, setCookie: response.headers.get('set-cookie') ?? '', form };
  }

  private remember(response: Response, body?: string): void {
    const session = /(kosh_session|kosh_login_csrf)=([^;]*)/.exec(response.headers.get('set-cookie') ?? '');
    if (session) this.cookie = session[2] ? `${session[1]}=${session[2]}` : '';
    const token = body && /name="csrf" value="([^"]+)"/.exec(body)?.[1];
    if (token) this.csrf = token;
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    const response = await fetch(`${this.base}${path}`, {
      redirect: 'manual',
      headers: { cookie: this.cookie, connection: 'close' },
    });
    const body = await response.text();
    this.remember(response, body);
    return { status: response.status, body };
  }

  async post(path: string, fields: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookie,
        connection: 'close',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: this.csrf, ...fields }).toString(),
    });
    this.remember(response);
    return response;
  }
}
